import { trace } from '@opentelemetry/api';
import type { Context, Span, SpanContext } from '@opentelemetry/api';
import { spanSlots } from './span-slots.js';

/**
 * What the sampler holds for a span and builds its labels from: one small
 * object per span, made when the span starts (or first entered, for spans of
 * other providers) and kept on the span. It deliberately holds no reference
 * to the span: the native sampler keeps what it holds strongly until the
 * window is serialized, and a span graph kept that way survives young-gen
 * collections and fills the old generation.
 */
export interface SampleContext {
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
  readonly localRootSpanId: string | undefined;
  /** The span's name, updated when it ends (a renamed span shows its final name). */
  readonly name: string | undefined;
}

/** What the span table (span-slots.ts) keeps on a SampleContext. */
export interface Slotted {
  /** Its id in the span table, once entered in AsyncContextFrame mode. */
  slotId?: number | undefined;
}

interface MutableSample extends Slotted {
  /** Always present (undefined until entered): one object shape for all. */
  slotId: number | undefined;
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
  readonly localRootSpanId: string | undefined;
  name: string | undefined;
  /**
   * Only for spans no processor of ours saw (an app's own provider without
   * `spanProcessor()`): nobody records their final name at end, so it is
   * read from the span when a window is serialized, if the span still lives.
   */
  readonly weakSpan?: WeakRef<Span>;
}

/** The context stored while no span is active: carries no span labels. */
export const NO_SPAN: SampleContext = Object.freeze({
  traceId: '',
  spanId: '',
  traceFlags: 0,
  localRootSpanId: undefined,
  name: undefined,
});

/** A span's SampleContext lives on the span object: one property store per span, gone with it. */
const SAMPLE = Symbol('spanfuse.sample');
type WithSample = { [SAMPLE]?: MutableSample };

function create(span: Span, localRootSpanId: string): MutableSample {
  const sc = span.spanContext();
  const s: MutableSample = { traceId: sc.traceId, spanId: sc.spanId, traceFlags: sc.traceFlags, localRootSpanId, name: spanNameOf(span), slotId: undefined };
  (span as WithSample)[SAMPLE] = s;
  return s;
}

/**
 * Record a starting span (called by the span processor's `onStart`): its
 * SampleContext with its local root (the first span of its trace in this
 * process). O(1): the parent, when local, already carries its root.
 */
export function noteLocalRoot(span: Span, parentContext: Context): void {
  const parent = trace.getSpan(parentContext);
  const psc = parent?.spanContext();
  const root =
    psc === undefined || psc.isRemote === true
      ? span.spanContext().spanId
      : ((parent as WithSample)[SAMPLE]?.localRootSpanId ?? psc.spanId);
  create(span, root);
}

/** Record an ending span's final name; its sampler id (if it has one) now keeps copies of its labels. */
export function noteEnd(span: Span): void {
  const s = (span as WithSample)[SAMPLE];
  if (s === undefined) return;
  s.name = spanNameOf(span);
  spanSlots.release(s);
}

/**
 * What the sampler's holder should label a span's samples with: a small
 * integer standing for `sample` (see span-slots.ts), or the object itself
 * for samples no processor of ours will see end (nothing would free their
 * id), for NO_SPAN, and when the table is full.
 */
export function samplerValue(sample: SampleContext): object {
  if (sample === NO_SPAN || (sample as MutableSample).weakSpan !== undefined) return sample;
  // @datadog/pprof types the value as an object; any V8 value works (it keeps a global handle on it).
  return (spanSlots.idOf(sample) as unknown as object | undefined) ?? sample;
}

/** The local root recorded at start; without it, from the parent link alone. */
export function localRootOf(span: Span): string {
  return sampleOfSpan(span).localRootSpanId ?? span.spanContext().spanId;
}

/** The SampleContext of a span (made on first use for spans nobody noted). */
export function sampleOfSpan(span: Span): SampleContext {
  const s = (span as WithSample)[SAMPLE];
  if (s !== undefined) return s;
  const parent = parentOf(span);
  const sc = span.spanContext();
  const made: MutableSample = {
    traceId: sc.traceId,
    spanId: sc.spanId,
    traceFlags: sc.traceFlags,
    localRootSpanId: parent === undefined || parent.isRemote === true ? sc.spanId : parent.spanId,
    name: spanNameOf(span),
    weakSpan: new WeakRef(span),
    slotId: undefined,
  };
  (span as WithSample)[SAMPLE] = made;
  return made;
}

/** The span name to label a sample with: the recorded one, or the live span's current one. */
export function sampleName(s: SampleContext): string | undefined {
  const live = (s as MutableSample).weakSpan?.deref();
  return live === undefined ? s.name : (spanNameOf(live) ?? s.name);
}

/**
 * The SampleContext of a value the sampler recorded: a span's id in the
 * span table, a SampleContext, a Span or an OpenTelemetry Context. Anything
 * else (or a context with no span) is NO_SPAN.
 */
export function resolveSample(value: unknown): SampleContext {
  if (typeof value === 'number') return spanSlots.resolve(value) ?? NO_SPAN;
  if (typeof value !== 'object' || value === null) return NO_SPAN;
  const v = value as { spanId?: unknown; spanContext?: unknown; getValue?: unknown };
  if (typeof v.spanId === 'string') return value as SampleContext;
  if (typeof v.spanContext === 'function') return sampleOfSpan(value as Span);
  if (typeof v.getValue === 'function') {
    const span = trace.getSpan(value as Context);
    return span === undefined ? NO_SPAN : sampleOfSpan(span);
  }
  return NO_SPAN;
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
