import { context } from '@opentelemetry/api';
import type { Context } from '@opentelemetry/api';

/**
 * `fn` bound to the context active now (or `ctx`): wherever and whenever it
 * is called later (a queue's drain loop, a batch flush, a pool's callback),
 * it runs inside the submitter's span, so its samples carry that span.
 * Built on `context.bind`.
 */
export function bindToContext<F extends (...args: never[]) => unknown>(fn: F, ctx: Context = context.active()): F {
  return context.bind(ctx, fn);
}

/**
 * Capture the active context once; run any later callback in it. For code
 * that keeps one record per queued item: store the runner with the item,
 * call `item.run(() => work(item))` when the item is processed.
 */
export function captureContext(ctx: Context = context.active()): <R>(fn: () => R) => R {
  return (fn) => context.with(ctx, fn);
}
