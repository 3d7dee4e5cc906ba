import { compactFrames } from './document.js';
import type { FlameDocument } from './document.js';
import type { Loaded } from './load.js';
import type { SampleStore } from './model.js';
import { selectRows } from './select.js';
import type { Selected, Selection } from './select.js';
import { METRICS, sumByStack, TreeBuilder } from './tree.js';
import type { Metric } from './tree.js';

/** The flamegraph document of a selection. */
export function flameDocument(loaded: Loaded, sel: Selection, metric: Metric): FlameDocument {
  const picked = selectRows(loaded, sel);
  return flameOf(loaded.store, picked, metric);
}

export function flameOf(store: SampleStore, picked: Selected, metric: Metric): FlameDocument {
  const b = new TreeBuilder(store, 4);
  const hasCpu = picked.rows.some((r) => store.windows[r.window]?.hasCpu === true);
  b.addStacks(sumByStack(store, picked.rows), 4);
  const m = METRICS.indexOf(metric);
  const flat = compactFrames(b.flatten(m), store.names, store.files);
  const root = flat.tree.values;
  return {
    kind: 'flame',
    title: `${picked.what}`,
    details: [
      `${picked.samples} samples, ${picked.spansWithSamples} span${picked.spansWithSamples === 1 ? '' : 's'} with samples, ${picked.windows} of ${picked.windowsRead} window${picked.windowsRead === 1 ? '' : 's'}${windowRange(store, picked)}`,
      `wall ${ms(root[1]?.[0] ?? 0)}, CPU ${hasCpu ? ms(root[2]?.[0] ?? 0) : 'not collected'}; widths: ${metricWords(metric)}`,
    ],
    metric,
    hasCpu,
    ...flat,
  };
}

export function metricWords(m: Metric): string {
  return m === 'samples' ? 'samples' : m === 'wall' ? 'wall time' : m === 'cpu' ? 'CPU time' : 'off-CPU time (wall minus CPU)';
}

export function ms(ns: number): string {
  return `${(ns / 1e6).toFixed(ns >= 1e8 ? 0 : 1)} ms`;
}

function windowRange(store: SampleStore, picked: Selected): string {
  let lo = Infinity;
  let hi = -Infinity;
  const seen = new Set<number>();
  for (const r of picked.rows) {
    if (seen.has(r.window)) continue;
    seen.add(r.window);
    const w = store.windows[r.window];
    if (w === undefined || w.startNs <= 0) continue;
    lo = Math.min(lo, w.startNs);
    hi = Math.max(hi, w.endNs);
  }
  if (!Number.isFinite(lo)) return '';
  return ` (${new Date(lo / 1e6).toISOString()} to ${new Date(hi / 1e6).toISOString()})`;
}
