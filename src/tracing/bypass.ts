import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';

/**
 * The processor handed to the app's provider: spans go through spanfuse's
 * chain (`fused`, which ends in the app's `downstream`) while spanfuse runs,
 * and straight to `downstream` once it has stopped, so nothing is held for
 * windows that will never close. Flush and shutdown belong to the app's
 * provider and go through the chain (which passes them on to `downstream`).
 */
export function bypassWhenStopped(stopped: () => boolean, fused: SpanProcessor, downstream: SpanProcessor): SpanProcessor {
  return {
    onStart: (span: Span, ctx: Context) => (stopped() ? downstream : fused).onStart(span, ctx),
    onEnding: (span: Span) => (stopped() ? downstream : fused).onEnding?.(span),
    onEnd: (span: ReadableSpan) => (stopped() ? downstream : fused).onEnd(span),
    forceFlush: () => fused.forceFlush(),
    shutdown: () => fused.shutdown(),
  };
}
