import { FRAME_GARBAGE_COLLECTION } from '../core/index.js';
import type { Profile } from '../core/index.js';
import { sampleTypeIndex } from './frames.js';

/** GC pauses the wall sampler saw in one window. */
export interface GcTotals {
  /** Wall samples whose leaf frame is `Garbage Collection`. */
  readonly samples: number;
  /** Their wall time, ns (samples × interval when the profile has no wall type). */
  readonly wallNs: number;
  /** Share of the window's sampled wall time spent in GC. */
  readonly share: number;
}

/**
 * GC pause totals of a wall profile window: the samples @datadog/pprof files
 * under its `Garbage Collection` leaf frame (V8 was collecting when the signal
 * came). Put them on the window as profile-level attributes, e.g.
 * `profiler.gc.time_ns`, `profiler.gc.samples`.
 */
export function gcTotals(wall: Profile): GcTotals {
  const strings = wall.stringTable.strings;
  const gcFunctions = new Set(
    wall.function.filter((f) => strings[Number(f.name)] === FRAME_GARBAGE_COLLECTION).map((f) => Number(f.id)),
  );
  const gcLocations = new Set(
    wall.location.filter((l) => l.line.some((ln) => gcFunctions.has(Number(ln.functionId)))).map((l) => Number(l.id)),
  );
  const countIdx = sampleTypeIndex(wall, 'sample', 'samples');
  const wallIdx = sampleTypeIndex(wall, 'wall');
  const period = Number(wall.period);
  let samples = 0;
  let wallNs = 0;
  let allNs = 0;
  const list = wall.sample;
  for (let i = 0; i < list.length; i++) {
    const s = list[i] as (typeof list)[number];
    const n = countIdx >= 0 ? Number(s.value[countIdx] ?? 0) : 1;
    const ns = wallIdx >= 0 ? Number(s.value[wallIdx] ?? 0) : n * period;
    allNs += ns;
    if (!gcLocations.has(Number(s.locationId[0] ?? 0))) continue;
    samples += n;
    wallNs += ns;
  }
  return { samples, wallNs, share: allNs > 0 ? wallNs / allNs : 0 };
}
