import type { Profile } from '../core/index.js';
import { attributeSamples, valueIndexes } from './attribute.js';
import type { AttributionOptions } from './attribute.js';

export interface SpanAllocation {
  /** Estimated bytes: each heap stack's bytes split by the span's share of its wall samples. */
  readonly bytes: number;
  /** Part of `bytes` from stacks that only this span's samples showed. */
  readonly exactBytes: number;
}

/**
 * Estimated allocation per span in one window. No runtime records the async
 * context of an allocation, so this is an estimate: a heap stack's bytes go to
 * the spans whose wall samples ran that code, in proportion to those samples
 * ("allocation follows time spent in the allocating code"). Exact only for
 * stacks a single span ran (`exactBytes`); for many concurrent requests of one
 * route, it apportions the route's bytes by time. With `spanIds`, only those
 * spans are returned (the others still take their share).
 */
export function estimateSpanAllocations(
  heap: Profile,
  wall: Profile,
  spanIds?: ReadonlySet<string>,
  options: AttributionOptions = {},
): Map<string, SpanAllocation> {
  const idx = valueIndexes(heap);
  const out = new Map<string, { bytes: number; exactBytes: number }>();
  if (idx.bytes < 0) return out;
  const attributions = attributeSamples(heap, wall, options);
  heap.sample.forEach((sample, i) => {
    const d = attributions[i]?.distribution;
    const bytes = Number(sample.value[idx.bytes] ?? 0);
    if (d === undefined || d.total <= 0 || bytes <= 0) return;
    for (const [span, w] of d.spans) {
      if (spanIds !== undefined && !spanIds.has(span)) continue;
      const e = out.get(span) ?? { bytes: 0, exactBytes: 0 };
      e.bytes += (bytes * w) / d.total;
      if (w === d.total) e.exactBytes += bytes;
      out.set(span, e);
    }
  });
  for (const e of out.values()) e.bytes = Math.round(e.bytes);
  return out;
}
