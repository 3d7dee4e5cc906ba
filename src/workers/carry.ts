import { context, defaultTextMapGetter, defaultTextMapSetter, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Context, Tracer } from '@opentelemetry/api';
import { w3cPropagator } from '../tracing/sdk.js';

/** W3C trace context of the submitting span, as plain strings (structured-clone safe). */
export interface TraceCarrier {
  traceparent?: string;
  tracestate?: string;
}

/** A task with the trace context it was submitted in. */
export interface CarriedTask<T> {
  readonly payload: T;
  readonly traceContext: TraceCarrier;
}

/**
 * The active (or given) context as W3C `traceparent`/`tracestate`. The
 * global propagator is used when the app set one (it may add baggage);
 * W3C trace context is always written, whatever the global one does.
 */
export function injectTraceContext(ctx: Context = context.active()): TraceCarrier {
  const carrier: Record<string, string> = {};
  try {
    propagation.inject(ctx, carrier, defaultTextMapSetter);
    w3cPropagator().inject(ctx, carrier, defaultTextMapSetter);
  } catch {
    // no context to carry
  }
  const out: TraceCarrier = {};
  for (const [k, v] of Object.entries(carrier)) (out as Record<string, string>)[k] = v;
  return out;
}

/** Wrap `payload` with the active trace context, for `postMessage` or a pool's `run()`. */
export function carryContext<T>(payload: T, ctx: Context = context.active()): CarriedTask<T> {
  return { payload, traceContext: injectTraceContext(ctx) };
}

export interface RunCarriedOptions {
  /** Tracer for the child span; default `trace.getTracer('spanfuse.workers')`. */
  readonly tracer?: Tracer;
  /** Span attributes added to the child span. */
  readonly attributes?: Record<string, string | number | boolean>;
}

/**
 * Worker side: run `fn` inside a new span named `name`, child of the carried
 * context (a root span when the carrier is empty). The span ends when `fn`
 * returns or its promise settles; a throw or rejection marks it as an error.
 * The worker's CPU samples of `fn` then carry the submitting trace.
 */
export function runInCarriedContext<R>(carrier: TraceCarrier | undefined, name: string, fn: () => R, options: RunCarriedOptions = {}): R {
  let parent = context.active();
  try {
    const c = carrier ?? {};
    parent = w3cPropagator().extract(propagation.extract(parent, c, defaultTextMapGetter), c, defaultTextMapGetter);
  } catch {
    // a malformed carrier: a root span
  }
  const tracer = options.tracer ?? trace.getTracer('spanfuse.workers');
  const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL, ...(options.attributes ? { attributes: options.attributes } : {}) }, parent);
  const fail = (err: unknown): void => {
    span.recordException(err instanceof Error ? err : String(err));
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  };
  let result: R;
  try {
    result = context.with(trace.setSpan(parent, span), fn);
  } catch (err) {
    fail(err);
    span.end();
    throw err;
  }
  if (result instanceof Promise) {
    return result.then(
      (v: unknown) => {
        span.end();
        return v;
      },
      (err: unknown) => {
        fail(err);
        span.end();
        throw err;
      },
    ) as R;
  }
  span.end();
  return result;
}

/**
 * Worker side: a task handler for {@link carryContext} envelopes. Use it as a
 * piscina task (`export default tracedTask('resize', resize)`) or on a
 * port (`parentPort.on('message', tracedTask('job', handle))`). A message
 * that is not an envelope is passed to `fn` as is, outside any span.
 */
export function tracedTask<T, R>(name: string, fn: (payload: T) => R, options: RunCarriedOptions = {}): (task: CarriedTask<T> | T) => R {
  return (task) => {
    if (!isCarried<T>(task)) return fn(task);
    return runInCarriedContext(task.traceContext, name, () => fn(task.payload), options);
  };
}

function isCarried<T>(x: unknown): x is CarriedTask<T> {
  return typeof x === 'object' && x !== null && 'traceContext' in x && 'payload' in x && typeof (x as { traceContext: unknown }).traceContext === 'object';
}
