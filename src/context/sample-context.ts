import type { Span, SpanContext } from '@opentelemetry/api';

/**
 * What the sampler stores for a span: one frozen object per span, created once
 * and reused for every entry into that span, so re-binding is an identity
 * comparison and the native side sees the same handle. Ids stay as the hex
 * strings OpenTelemetry already holds; labels are built from this only when a
 * window is serialized.
 */
export interface SampleContext {
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
  readonly localRootSpanId: string | undefined;
  /** The span, read for its (possibly updated) name at serialization time. */
  readonly span: Span | undefined;
}

/** The context stored while no span is active: carries no span labels. */
export const NO_SPAN: SampleContext = Object.freeze({
  traceId: '',
  spanId: '',
  traceFlags: 0,
  localRootSpanId: undefined,
  span: undefined,
});

const MAX_LOCAL_ROOTS = 16_384;

/**
 * Caches one SampleContext per span and tracks local roots (the first span of a
 * trace in this process). Bounded: the span-id -> local-root map keeps the most
 * recent entries only.
 */
export class SampleContextCache {
  readonly #bySpan = new WeakMap<Span, SampleContext>();
  readonly #localRoot = new Map<string, string>();

  get(span: Span): SampleContext {
    let c = this.#bySpan.get(span);
    if (c === undefined) {
      c = this.#create(span);
      this.#bySpan.set(span, c);
    }
    return c;
  }

  /** Record the local root of a starting span; called by the span processor. */
  noteStart(span: Span, parent: SpanContext | undefined): void {
    const id = span.spanContext().spanId;
    this.#remember(id, this.#rootFor(id, parent));
  }

  #create(span: Span): SampleContext {
    const sc = span.spanContext();
    const parent = parentOf(span);
    let root = this.#localRoot.get(sc.spanId);
    if (root === undefined) {
      root = this.#rootFor(sc.spanId, parent);
      this.#remember(sc.spanId, root);
    }
    return Object.freeze({
      traceId: sc.traceId,
      spanId: sc.spanId,
      traceFlags: sc.traceFlags,
      localRootSpanId: root,
      span,
    });
  }

  #rootFor(spanId: string, parent: SpanContext | undefined): string {
    if (parent === undefined || parent.isRemote === true) return spanId;
    // The parent started (and was entered) before this span in this process.
    return this.#localRoot.get(parent.spanId) ?? parent.spanId;
  }

  #remember(spanId: string, root: string): void {
    if (this.#localRoot.size >= MAX_LOCAL_ROOTS) {
      const oldest = this.#localRoot.keys().next();
      if (oldest.done !== true) this.#localRoot.delete(oldest.value);
    }
    this.#localRoot.set(spanId, root);
  }
}

/** SDK 2.x spans expose `parentSpanContext` (ReadableSpan); other spans may not. */
function parentOf(span: Span): SpanContext | undefined {
  const p = (span as { parentSpanContext?: unknown }).parentSpanContext;
  return typeof p === 'object' && p !== null ? (p as SpanContext) : undefined;
}

/** The span's current name, for SDK spans; undefined for others. */
export function spanNameOf(span: Span | undefined): string | undefined {
  const n = (span as { name?: unknown } | undefined)?.name;
  return typeof n === 'string' ? n : undefined;
}
