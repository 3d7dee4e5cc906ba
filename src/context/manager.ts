import { trace } from '@opentelemetry/api';
import type { Context, SpanContext } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import type { SamplerBinder } from './binder.js';
import { NO_SPAN, spanNameOf } from './sample-context.js';
import type { SampleContextCache, SampleContext } from './sample-context.js';

/**
 * Publishes the active span for out-of-process profilers (OTEP-4947 thread
 * context); the runtime stage provides it on AsyncContextFrame runtimes.
 */
export interface ThreadContextRunner {
  run<T>(spanContext: SpanContext, fn: () => T, spanName?: string, localRootSpanId?: string): T;
}

/**
 * An OpenTelemetry context manager (AsyncLocalStorage based, so `await`,
 * timers, emitters and `context.bind` behave exactly as with the stock one)
 * that also binds the sampler to the span of every context it enters.
 */
export class SpanfuseContextManager extends AsyncLocalStorageContextManager {
  readonly #cache: SampleContextCache;
  #binder: SamplerBinder | undefined;
  #threadContext: ThreadContextRunner | undefined;

  constructor(cache: SampleContextCache) {
    super();
    this.#cache = cache;
  }

  /** Attach (or detach, with undefined) the sampler binding. */
  setBinder(binder: SamplerBinder | undefined): void {
    this.#binder = binder;
  }

  /** Also publish each entered span's thread-context record (or stop, with undefined). */
  setThreadContext(runner: ThreadContextRunner | undefined): void {
    this.#threadContext = runner;
  }

  /** The SampleContext of the context active now. */
  activeSample(): SampleContext {
    const span = trace.getSpan(this.active());
    return span === undefined ? NO_SPAN : this.#cache.get(span);
  }

  override with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    const binder = this.#binder;
    if (binder === undefined) return super.with(context, fn, thisArg, ...args);
    const span = trace.getSpan(context);
    // Same span as the context we are in: the sampler is already bound.
    if (span === trace.getSpan(this.active())) return super.with(context, fn, thisArg, ...args);
    const sample = span === undefined ? NO_SPAN : this.#cache.get(span);
    const enter = (): ReturnType<F> => super.with(context, fn, thisArg, ...args);
    const tc = this.#threadContext;
    if (tc === undefined || span === undefined) return binder.run(sample, enter);
    return binder.run(sample, () => tc.run(span.spanContext(), enter, spanNameOf(span), sample.localRootSpanId));
  }
}
