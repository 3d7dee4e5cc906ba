import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { SampleContextCache } from '../context/index.js';

/**
 * Tells the sample-context cache which span is the local root of each new
 * span, and reports ended spans to `onSpanEnd` (thread-context invalidation).
 */
export class LocalRootProcessor implements SpanProcessor {
  readonly #cache: SampleContextCache;
  readonly #onSpanEnd: ((span: ReadableSpan) => void) | undefined;
  constructor(cache: SampleContextCache, onSpanEnd?: (span: ReadableSpan) => void) {
    this.#cache = cache;
    this.#onSpanEnd = onSpanEnd;
  }
  onStart(span: Span, parentContext: Context): void {
    this.#cache.noteStart(span, parentContext);
  }
  onEnd(span: ReadableSpan): void {
    this.#cache.noteEnd(span as unknown as Span);
    this.#onSpanEnd?.(span);
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
