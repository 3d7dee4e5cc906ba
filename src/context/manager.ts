import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import type { Context, Span, SpanContext } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { time } from '../core/dd-pprof.js';
import type { AsyncLocalStorage } from 'node:async_hooks';
import { isMainThread } from 'node:worker_threads';
import { FrameBinder, HookBinder } from './binder.js';
import type { SamplerBinder } from './binder.js';
import { NO_SPAN, sampleOfSpan, samplerValue } from './sample-context.js';
import type { SampleContext } from './sample-context.js';

/**
 * Publishes the active span for out-of-process profilers (OTEP-4947 thread
 * context); the runtime stage provides it on AsyncContextFrame runtimes.
 */
export interface ThreadContextRunner {
  /** `span` has the SpanContext fields; one object per span (spanfuse passes its SampleContext). */
  run<T>(span: Pick<SpanContext, 'traceId' | 'spanId' | 'traceFlags'>, fn: () => T, spanName?: string, localRootSpanId?: string): T;
}

/**
 * What a frame of the sampler's key holds: the sampler's holder (its native
 * field points at the SampleContext), with the OTel Context at index 0.
 */
type Holder = { 0?: Context };

/** The value of the throwaway frame `shieldFrame` runs in (never read). */
const SHIELD: Holder = Object.freeze([ROOT_CONTEXT]);

/** A Context that keeps the holder made for it (see {@link enterFrame}). */
type WithHolder = Record<symbol, Holder | undefined>;

/**
 * Runs first in the sampler's new frame: the holder was made for the
 * SampleContext (what the native sampler reads); index 0 now carries the
 * OTel Context for `active()`. The sampler never reads index 0.
 *
 * The Context keeps the holder under `slot`: both the span (hence the
 * SampleContext) and index 0 are fixed by the Context, so entering the same
 * Context again (instrumentations re-enter a request's Context from every
 * bound listener: 6 entries per request with the HTTP instrumentation, one
 * distinct Context) reuses the holder instead of making another. Each holder
 * is a native object with two V8 global handles, which every young-generation
 * collection must process (~1.3 µs per holder measured on Node 24).
 */
function enterFrame<A extends unknown[], R>(
  key: AsyncLocalStorage<unknown>,
  context: Context,
  slot: symbol,
  cb: (...a: A) => R,
  ...args: A
): R {
  const h = key.getStore() as Holder | undefined;
  if (h !== undefined) {
    h[0] = context;
    // Not in worker threads: a SIGSEGV in the 100-worker mass-terminate test
    // (Node 24) followed this change once; until it is understood, holders
    // there die with their frames as before.
    if (isMainThread && Object.isExtensible(context)) (context as unknown as WithHolder)[slot] = h;
  }
  return cb(...args);
}

/**
 * Enter `context` in the sampler's frame: with the holder it keeps, or a new
 * one made for `sample` (which labels with the span's small integer id, see
 * span-slots.ts, so the holder's strong handle keeps no young object alive).
 */
function enterWithHolder<A extends unknown[], R>(
  key: AsyncLocalStorage<unknown>,
  context: Context,
  slot: symbol,
  held: Holder | undefined,
  sample: SampleContext,
  cb: (...a: A) => R,
  args: A,
): R {
  return held !== undefined ? key.run(held, cb, ...args) : time.runWithContext(samplerValue(sample), enterFrame<A, R>, key, context, slot, cb, ...args);
}

/**
 * An OpenTelemetry context manager (AsyncLocalStorage based, so `await`,
 * timers, emitters and `context.bind` behave exactly as with the stock one)
 * that also binds the sampler to the span of every context it enters.
 *
 * AsyncContextFrame mode: once the sampler's key is known, every context is
 * entered in that key's frame (one frame per `with`, as the stock manager),
 * and `active()` reads it back from there. The native side holds only the
 * span's small SampleContext, never the Context or the span. The key stays in use after the
 * sampler stops (then with a plain `[context]` holder), so continuations
 * entered earlier keep their context. Hooks mode: the stock frame, plus a
 * write of the sampler's slot when the span changes.
 */
export class SpanfuseContextManager extends AsyncLocalStorageContextManager {
  #frame: FrameBinder | undefined;
  #key: AsyncLocalStorage<unknown> | undefined;
  #hooks: HookBinder | undefined;
  #threadContext: ThreadContextRunner | undefined;
  #watch: ((span: Span) => void) | undefined;

  /** Attach (or detach, with undefined) the sampler binding. */
  setBinder(binder: SamplerBinder | undefined): void {
    this.#frame = binder instanceof FrameBinder ? binder : undefined;
    this.#hooks = binder instanceof HookBinder ? binder : undefined;
    // A key once used stays: frames entered through it must still resolve.
    if (this.#frame !== undefined) this.#key ??= this.#frame.key;
  }

  /**
   * Show every span entered to `watch` (or stop, with undefined): the fusion
   * check, which stops itself once it has a verdict.
   */
  setSpanWatcher(watch: ((span: Span) => void) | undefined): void {
    this.#watch = watch;
  }

  /** Also publish each entered span's thread-context record (or stop, with undefined). */
  setThreadContext(runner: ThreadContextRunner | undefined): void {
    this.#threadContext = runner;
  }

  /** The span of the context active now. */
  activeSpan(): Span | undefined {
    return trace.getSpan(this.active());
  }

  /** The SampleContext of the context active now, undefined outside spans (the hooks binder's view). */
  activeSampleOrUndefined(): SampleContext | undefined {
    const span = trace.getSpan(this.active());
    return span === undefined ? undefined : sampleOfSpan(span);
  }

  /** The SampleContext of the context active now. */
  activeSample(): SampleContext {
    const span = this.activeSpan();
    return span === undefined ? NO_SPAN : sampleOfSpan(span);
  }

  /**
   * Run `fn` (the sampler's final stop) in a throwaway frame: stopping
   * @datadog/pprof's wall profiler disables its AsyncLocalStorage, which
   * deletes the key from the *current* frame in place, and that frame is
   * shared with the caller's pending continuations. Run this way, the
   * deletion hits a copy and the caller's frame keeps its context.
   */
  shieldFrame<T>(fn: () => T): T {
    const key = this.#key;
    return key === undefined ? fn() : key.run(SHIELD, fn);
  }

  override active(): Context {
    const key = this.#key;
    if (key !== undefined) {
      const h = key.getStore() as Holder | undefined;
      if (h !== undefined) return h[0] ?? ROOT_CONTEXT;
    }
    return super.active();
  }

  override with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    const watch = this.#watch;
    if (watch !== undefined) {
      const span = trace.getSpan(context);
      if (span !== undefined) watch(span);
    }
    // The binder finds the key when enabled, which may follow setBinder().
    const key = this.#key ?? (this.#key = this.#frame?.key);
    if (key !== undefined) return this.#withKey(key, context, fn, thisArg, args);
    const hooks = this.#hooks;
    if (hooks !== undefined && hooks.enabled) return this.#withHooks(hooks, context, fn, thisArg, args);
    const frame = this.#frame;
    if (frame !== undefined && frame.live) {
      // The sampler's key could not be found: its frame around ours.
      frame.noteEntry();
      const span = trace.getSpan(context);
      const sample = span === undefined ? NO_SPAN : sampleOfSpan(span);
      return time.runWithContext<ReturnType<F>, []>(sample, () => super.with(context, fn, thisArg, ...args));
    }
    return super.with(context, fn, thisArg, ...args);
  }

  #withKey<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    key: AsyncLocalStorage<unknown>,
    context: Context,
    fn: F,
    thisArg: ThisParameterType<F> | undefined,
    args: A,
  ): ReturnType<F> {
    const cb = (thisArg === undefined || thisArg === null ? fn : fn.bind(thisArg)) as (...a: A) => ReturnType<F>;
    const frame = this.#frame;
    if (frame === undefined || !frame.live) return key.run([context], cb, ...args);
    frame.noteEntry();
    const slot = frame.holderSlot;
    const held = (context as unknown as WithHolder)[slot];
    const tc = this.#threadContext;
    if (held !== undefined && tc === undefined) return key.run(held, cb, ...args);
    const span = trace.getSpan(context);
    const sample = span === undefined ? NO_SPAN : sampleOfSpan(span);
    if (tc === undefined || span === undefined) return enterWithHolder(key, context, slot, held, sample, cb, args);
    // The SampleContext stands for the span (it has the SpanContext fields).
    return tc.run(sample, () => enterWithHolder(key, context, slot, held, sample, cb, args), sample.name, sample.localRootSpanId);
  }

  #withHooks<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    hooks: HookBinder,
    context: Context,
    fn: F,
    thisArg: ThisParameterType<F> | undefined,
    args: A,
  ): ReturnType<F> {
    const span = trace.getSpan(context);
    const sample = span === undefined ? undefined : sampleOfSpan(span);
    // Same span as the one bound: nothing to switch.
    if (sample === hooks.current) return super.with(context, fn, thisArg, ...args);
    const prev = hooks.current;
    hooks.set(sample);
    try {
      return super.with(context, fn, thisArg, ...args);
    } finally {
      hooks.set(prev);
    }
  }
}
