import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { noteEnd, noteLocalRoot } from '../context/index.js';

/**
 * Gives each new span its SampleContext with its local root, records its
 * final name when it ends, and reports ended spans to `onSpanEnd`
 * (thread-context invalidation).
 */
export class LocalRootProcessor implements SpanProcessor {
  readonly #onSpanEnd: ((span: ReadableSpan) => void) | undefined;
  constructor(onSpanEnd?: (span: ReadableSpan) => void) {
    this.#onSpanEnd = onSpanEnd;
  }
  onStart(span: Span, parentContext: Context): void {
    noteLocalRoot(span, parentContext);
  }
  onEnd(span: ReadableSpan): void {
    noteEnd(span as unknown as Span);
    this.#onSpanEnd?.(span);
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
