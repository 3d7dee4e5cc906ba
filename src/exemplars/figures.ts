import type { Attributes } from '@opentelemetry/api';
import type { WindowAggregates } from './aggregate.js';
import type { FiguresTable } from './figures-table.js';
import { FIG_CPU, FIG_GC, FIG_OFFCPU, FIG_SAMPLES, FIG_TOP_FRAMES, FIG_WALL } from './attributes.js';

/** Figures summed over windows, leaf frames by name. */
export interface MergedFigures {
  samples: number;
  wallNs: number;
  cpuNs: number;
  gcNs: number;
  readonly frames: Map<string, number>;
}

export function zeroFigures(): MergedFigures {
  return { samples: 0, wallNs: 0, cpuNs: 0, gcNs: 0, frames: new Map() };
}

/**
 * Figures of one id over the windows that may hold its samples: the window it
 * ended in and the one before (a span that started in the previous window),
 * summed over every map `pick` gives (a local root's subtree is its own
 * samples in `bySpan` plus its descendants' in `byLocalRoot`). `undefined`
 * when no window has a sample of it.
 */
export function collectFigures(
  id: string,
  windows: readonly (WindowAggregates | undefined)[],
  pick: (w: WindowAggregates) => readonly FiguresTable[],
): MergedFigures | undefined {
  let out: MergedFigures | undefined;
  for (const w of windows) {
    if (w === undefined) continue;
    for (const table of pick(w)) {
      const row = table.find(id);
      if (row < 0) continue;
      out ??= zeroFigures();
      table.addTo(row, out);
      const frames = out.frames;
      table.forEachLeaf(row, (loc, n) => {
        const name = w.frameName(loc);
        frames.set(name, (frames.get(name) ?? 0) + n);
      });
    }
  }
  return out;
}

/**
 * Write the figures under `prefix`.
 *
 * Off-CPU time is the span's duration minus its sampled on-CPU time. It is
 * everything the span spent not running on a CPU: blocked in a synchronous
 * wait (`Atomics.wait`, sync fs), awaiting I/O or timers (no sample carries
 * the span while the thread is idle or runs other spans' callbacks), and
 * queued behind other work on the event loop. Wall-sampled time minus CPU
 * would see only the synchronous part and miss every `await`, which is the
 * common way a Node.js span waits. CPU time comes from the sampler's
 * per-sample thread CPU clock, so it is statistical: a span a few sampling
 * intervals long gets coarse figures.
 */
export function writeFigures(
  out: Attributes,
  prefix: string,
  f: MergedFigures,
  durationNs: number,
  hasCpu: boolean,
  topFrames: number,
  scrub: (text: string) => string = identity,
): void {
  out[prefix + FIG_SAMPLES] = f.samples;
  out[prefix + FIG_WALL] = Math.round(f.wallNs);
  out[prefix + FIG_GC] = Math.round(f.gcNs);
  if (hasCpu) {
    out[prefix + FIG_CPU] = Math.round(f.cpuNs);
    out[prefix + FIG_OFFCPU] = Math.max(0, Math.round(durationNs - f.cpuNs));
  }
  if (topFrames > 0 && f.frames.size > 0) out[prefix + FIG_TOP_FRAMES] = top(f.frames, topFrames).map(scrub);
}

const identity = (text: string): string => text;

/** `name (file:line) 62%`, the most sampled leaf frames first. */
function top(frames: ReadonlyMap<string, number>, n: number): string[] {
  let total = 0;
  for (const c of frames.values()) total += c;
  return [...frames]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([frame, c]) => `${frame} ${Math.round((100 * c) / total)}%`);
}
