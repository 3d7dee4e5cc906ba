import { findLabel, Label, LABEL_SPAN_ID } from '../core/index.js';
import type { Profile } from '../core/index.js';
import { FrameInterner, NO_SCRIPT } from './frames.js';
import { sampleTypeIndex } from '../core/profile-index.js';
import { ALLOC_OBJECTS, ALLOC_SPACE, INUSE_OBJECTS, INUSE_SPACE } from './types.js';
import { NO_SPAN, WallIndex } from './wall-index.js';
import type { Distribution } from './wall-index.js';

/** Bytes whose stack shares no frame with any wall sample of the window. */
export const UNATTRIBUTED = '(unattributed)';

export interface OperationAllocation {
  /** Span name of the wall samples, `(no span)`, or `(unattributed)`. */
  readonly operation: string;
  /** Estimated bytes (alloc_space when the profile has it, else inuse_space). */
  readonly bytes: number;
  /** Estimated objects, when the heap profile counts objects. */
  readonly objects?: number;
  /** `bytes` over all sampled bytes of the heap profile. */
  readonly share: number;
  /** Part of `bytes` from stacks that only this operation's samples showed. */
  readonly exactBytes: number;
}

/** Per heap sample: which operation and span (if unambiguous) it belongs to. */
export interface SampleAttribution {
  readonly distribution: Distribution;
  /** Operation holding at least `minShare` of the matched wall weight. */
  readonly operation?: string;
  /** Span holding at least `minShare` of the matched wall weight. */
  readonly spanId?: string;
}

export interface AttributionOptions {
  /** Share of matched wall weight that makes an attribution unambiguous. Default 0.9. */
  readonly minShare?: number;
  /** Least matched wall samples for an unambiguous attribution. Default 2. */
  readonly minWeight?: number;
}

/** Which heap values to attribute: allocations if sampled, else what is live. */
export function valueIndexes(heap: Profile): { bytes: number; objects: number } {
  const alloc = sampleTypeIndex(heap, ALLOC_SPACE);
  if (alloc >= 0) return { bytes: alloc, objects: sampleTypeIndex(heap, ALLOC_OBJECTS) };
  return { bytes: sampleTypeIndex(heap, INUSE_SPACE), objects: sampleTypeIndex(heap, INUSE_OBJECTS) };
}

/** Leaf frames a labelled heap stack may have that no wall sample showed (an allocating helper too quick to be sampled). */
const MAX_UNSEEN_LEAF_FRAMES = 1;

function knownFrames(frames: readonly number[]): number {
  let n = 0;
  for (let i = 0; i < frames.length; i++) if (frames[i] !== NO_SCRIPT) n++;
  return n;
}

function dominant(m: ReadonlyMap<string, number>, total: number, minShare: number): string | undefined {
  for (const [k, w] of m) if (w >= minShare * total) return k;
  return undefined;
}

/**
 * The wall-sample distribution of every heap sample, aligned with
 * `heap.sample`. Identical stacks are matched once.
 */
export function attributeSamples(heap: Profile, wall: Profile, options: AttributionOptions): SampleAttribution[] {
  const minShare = options.minShare ?? 0.9;
  const minWeight = options.minWeight ?? 2;
  const interner = new FrameInterner();
  const index = new WallIndex(wall, interner);
  const resolve = interner.resolver(heap);
  const cache = new Map<string, SampleAttribution>();
  return heap.sample.map((sample) => {
    const key = sample.locationId.join(',');
    let a = cache.get(key);
    if (a === undefined) {
      const frames = resolve(sample.locationId);
      const distribution = index.match(frames);
      // Labels only where the wall saw this path: a match that stopped more
      // than one frame short of the leaf stands for the callers' mix, not for
      // this path (a rarely sampled route under a hot shared prefix would get
      // the hot route's label). The per-operation split still uses it.
      const sure = distribution.total >= minWeight && distribution.matchedFrames >= knownFrames(frames) - MAX_UNSEEN_LEAF_FRAMES;
      const operation = sure ? dominant(distribution.operations, distribution.total, minShare) : undefined;
      const spanId = sure ? dominant(distribution.spans, distribution.total, minShare) : undefined;
      a = {
        distribution,
        ...(operation !== undefined ? { operation } : {}),
        ...(spanId !== undefined ? { spanId } : {}),
      };
      cache.set(key, a);
    }
    return a;
  });
}

/**
 * Which operations allocated (or hold) what, in one window.
 *
 * V8's sampling heap profiler records the allocating stack but no async
 * context, while the window's wall profile has stacks with span labels. Each
 * heap sample's bytes are split across operations in proportion to the wall
 * samples whose stacks contain the same frames (see `WallIndex.match`): a
 * stack only one route runs goes wholly to it; code shared by several routes
 * is split by how much time each spent in it. Pure: reads both profiles,
 * changes neither. Sorted by bytes, largest first.
 */
export function attributeAllocations(
  heap: Profile,
  wall: Profile,
  options: AttributionOptions = {},
): OperationAllocation[] {
  return summarize(heap, attributeSamples(heap, wall, options));
}

function externalLocations(heap: Profile): Set<number> {
  const strings = heap.stringTable.strings;
  const fns = new Set(heap.function.filter((f) => strings[Number(f.name)] === '(external)').map((f) => Number(f.id)));
  return new Set(heap.location.filter((l) => l.line.some((ln) => fns.has(Number(ln.functionId)))).map((l) => Number(l.id)));
}

function summarize(heap: Profile, attributions: readonly SampleAttribution[]): OperationAllocation[] {
  const idx = valueIndexes(heap);
  if (idx.bytes < 0) return [];
  const acc = new Map<string, { bytes: number; objects: number; exactBytes: number }>();
  const entry = (op: string): { bytes: number; objects: number; exactBytes: number } => {
    let e = acc.get(op);
    if (e === undefined) {
      e = { bytes: 0, objects: 0, exactBytes: 0 };
      acc.set(op, e);
    }
    return e;
  };
  let totalBytes = 0;
  const external = externalLocations(heap);
  heap.sample.forEach((sample, i) => {
    const a = attributions[i];
    if (a === undefined) return;
    // @datadog/pprof's `(external)` sample is a process-wide gauge
    // (memoryUsage().external), not a sampled allocation: not attributable.
    if (sample.locationId.length === 1 && external.has(Number(sample.locationId[0]))) return;
    const bytes = Number(sample.value[idx.bytes] ?? 0);
    const objects = idx.objects >= 0 ? Number(sample.value[idx.objects] ?? 0) : 0;
    if (bytes <= 0) return;
    totalBytes += bytes;
    const d = a.distribution;
    if (d.total <= 0) {
      const e = entry(UNATTRIBUTED);
      e.bytes += bytes;
      e.objects += objects;
      return;
    }
    for (const [op, w] of d.operations) {
      const e = entry(op);
      e.bytes += (bytes * w) / d.total;
      e.objects += (objects * w) / d.total;
      if (w === d.total) e.exactBytes += bytes;
    }
  });
  return [...acc.entries()]
    .map(([operation, e]) => ({
      operation,
      bytes: Math.round(e.bytes),
      ...(idx.objects >= 0 ? { objects: Math.round(e.objects) } : {}),
      share: totalBytes > 0 ? e.bytes / totalBytes : 0,
      exactBytes: e.exactBytes,
    }))
    .sort((a, b) => b.bytes - a.bytes);
}

/** Label key put on heap samples whose operation is unambiguous. */
export const LABEL_OPERATION = 'operation';

export interface LabelResult {
  readonly samples: number;
  readonly labelledOperation: number;
  readonly labelledSpan: number;
}

/**
 * Put an `operation` label (the span name) on each heap sample whose matched
 * wall samples are at least `minShare` from one operation (not for code
 * outside spans), and a `span_id`
 * label where they are from one span. Changes `heap` in place (call it before
 * the window is handed to exporters); samples that already carry a label of
 * that key are left alone.
 */
export function labelHeapSamples(heap: Profile, wall: Profile, options: AttributionOptions = {}): LabelResult {
  return applyLabels(heap, attributeSamples(heap, wall, options));
}

/**
 * Both at once, matching each heap stack once: the per-operation figure
 * (computed before labelling) and the labels put on `heap`.
 */
export function attributeWindow(
  heap: Profile,
  wall: Profile,
  options: AttributionOptions = {},
): { operations: OperationAllocation[]; labels: LabelResult } {
  const attributions = attributeSamples(heap, wall, options);
  const operations = summarize(heap, attributions);
  return { operations, labels: applyLabels(heap, attributions) };
}

function applyLabels(heap: Profile, attributions: readonly SampleAttribution[]): LabelResult {
  const strings = heap.stringTable;
  const opKey = strings.dedup(LABEL_OPERATION);
  const spanKey = strings.dedup(LABEL_SPAN_ID);
  let samples = 0;
  let labelledOperation = 0;
  let labelledSpan = 0;
  heap.sample.forEach((sample, i) => {
    const a = attributions[i];
    if (a === undefined) return;
    samples++;
    const has = (key: number): boolean => findLabel(sample.label, key) !== undefined;
    if (a.operation !== undefined && a.operation !== NO_SPAN && !has(opKey)) {
      sample.label.push(new Label({ key: opKey, str: strings.dedup(a.operation) }));
      labelledOperation++;
    }
    if (a.spanId !== undefined && !has(spanKey)) {
      sample.label.push(new Label({ key: spanKey, str: strings.dedup(a.spanId) }));
      labelledSpan++;
    }
  });
  return { samples, labelledOperation, labelledSpan };
}

