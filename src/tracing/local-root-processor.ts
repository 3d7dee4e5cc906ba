import { trace } from '@opentelemetry/api';
import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { SampleContextCache } from '../context/index.js';

/** Tells the sample-context cache which span is the local root of each new span. */
export class LocalRootProcessor implements SpanProcessor {
  readonly #cache: SampleContextCache;
  constructor(cache: SampleContextCache) {
    this.#cache = cache;
  }
  onStart(span: Span, parentContext: Context): void {
    this.#cache.noteStart(span, trace.getSpanContext(parentContext));
  }
  onEnd(_span: ReadableSpan): void {}
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
