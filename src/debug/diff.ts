import { compactFrames } from './document.js';
import type { FlameDocument, GrowthRow } from './document.js';
import { metricWords, ms } from './flame.js';
import type { Loaded } from './load.js';
import { FlameError } from './model.js';
import { selectRows } from './select.js';
import { resolveOperation } from './select.js';
import { frameStats, METRICS, sumByStack, TreeBuilder } from './tree.js';
import type { Metric } from './tree.js';

/**
 * The tail-vs-normal document of one operation: both sides summed over the
 * same call tree and divided by their number of spans, so a frame's two
 * values say how much of it one tail span and one normal span run.
 */
export function diffDocument(loaded: Loaded, operation: string, metric: Metric, top = 15): FlameDocument {
  const op = resolveOperation(loaded, operation);
  const tail = selectRows(loaded, { operation, tail: true });
  let normal;
  try {
    normal = selectRows(loaded, { operation, normal: true });
  } catch (err) {
    if (err instanceof FlameError && err.code === 'not-found') {
      throw new FlameError('not-found', `operation ${JSON.stringify(operation)} has no samples of normal spans to compare its tail with`);
    }
    throw err;
  }
  const { store } = loaded;
  const counts = spanCounts(loaded, op.spans, tail.spansWithSamples, normal.spansWithSamples);
  const b = new TreeBuilder(store, 8);
  const hasCpu = (w: number): boolean => store.windows[w]?.hasCpu === true;
  const tailSums = sumByStack(store, tail.rows, 1 / counts.tail);
  const normalSums = sumByStack(store, normal.rows, 1 / counts.normal);
  b.addStacks(tailSums, 4, 0);
  b.addStacks(normalSums, 4, 4);
  const items: { stack: number; values: number[] }[] = [];
  for (let st = 0; st < store.stacks.length; st++) {
    const v = [...tailSums.subarray(st * 4, st * 4 + 4), ...normalSums.subarray(st * 4, st * 4 + 4)];
    if (v.some((x) => x !== 0)) items.push({ stack: st, values: v });
  }
  const m = METRICS.indexOf(metric);
  const flat = compactFrames(b.flatten(m), store.names, store.files);
  const stats = frameStats(store, items, 8);
  const rootTailAll = flat.tree.values[m]?.[0] ?? 0;
  // Self (exclusive) time: where the extra time of a tail span is spent, not
  // every caller above it. A frame normal spans never run is marked.
  const growth: GrowthRow[] = [...stats.values()]
    .map((s) => ({
      name: store.names[s.frame] ?? '?',
      file: store.files[s.frame] ?? '',
      tail: s.self[m] ?? 0,
      normal: s.self[4 + m] ?? 0,
      tailTotal: s.total[m] ?? 0,
      onlyInTail: (s.total[4] ?? 0) === 0 && (s.total[m] ?? 0) > 0,
    }))
    // Leave out crumbs: under 0.5% of a tail span (1% for tail-only frames).
    .filter((g) => g.tail - g.normal >= 0.005 * rootTailAll || (g.onlyInTail && g.tailTotal >= 0.01 * rootTailAll))
    .sort((a, b2) => b2.tail - b2.normal - (a.tail - a.normal) || b2.tailTotal - a.tailTotal)
    .slice(0, top);
  const key = op.key ?? operation;
  const unit = metric === 'samples' ? (v: number): string => v.toFixed(1) : ms;
  const rootTail = flat.tree.values[m]?.[0] ?? 0;
  const rootNormal = flat.tree.values[4 + m]?.[0] ?? 0;
  return {
    kind: 'diff',
    title: `tail vs normal: ${key}`,
    details: [
      `${counts.tail} tail span${counts.tail === 1 ? '' : 's'} (${tail.samples} samples) vs ${counts.normal} normal span${counts.normal === 1 ? '' : 's'} (${normal.samples} samples); spans counted ${counts.source}; ${Math.max(tail.windows, normal.windows)} of ${tail.windowsRead} windows`,
      `per span: tail ${unit(rootTail)}, normal ${unit(rootNormal)} of ${metricWords(metric)}; widths: tail per span; colour: share of a tail span vs share of a normal span (red: grows more than the span as a whole, blue: less)`,
    ],
    metric,
    hasCpu: tail.rows.some((r) => hasCpu(r.window)),
    growth,
    spanCounts: counts,
    ...flat,
  };
}

function spanCounts(
  loaded: Loaded,
  spans: readonly { spanId: string; endNs: number; attributes: Readonly<Record<string, unknown>> }[],
  tailWithSamples: number,
  normalWithSamples: number,
): { tail: number; normal: number; source: string } {
  const ws = loaded.store.windows.filter((w) => w.startNs > 0);
  if (spans.length > 0 && ws.length > 0) {
    const lo = Math.min(...ws.map((w) => w.startNs));
    const hi = Math.max(...ws.map((w) => w.endNs));
    let tail = 0;
    let normal = 0;
    for (const s of spans) {
      if (s.endNs < lo || s.endNs > hi) continue;
      if (s.attributes['profiler.tail'] === true) tail++;
      else normal++;
    }
    // Short normal spans often have no sample at all: spans.jsonl counts them.
    if (tail > 0 && normal > 0) return { tail, normal, source: 'from spans.jsonl (spans that ended inside the windows)' };
  }
  return { tail: Math.max(1, tailWithSamples), normal: Math.max(1, normalWithSamples), source: 'as spans with samples (no spans.jsonl)' };
}
