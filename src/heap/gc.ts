import { FRAME_GARBAGE_COLLECTION } from '../core/index.js';
import type { Diagnostics, Profile, WindowProfile } from '../core/index.js';
import { LeafFunctionTest, sampleTypeIndex } from '../core/profile-index.js';
import { stepEvery, STEP_ENTRIES } from '../core/slices.js';
import type { Steps } from '../core/slices.js';

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
 * `profiler.gc.time_ns`, `profiler.gc.samples`. In steps of a few hundred
 * samples (a window of 60,000 samples is read over several event-loop
 * turns); the leaf of each sample is looked up once per distinct location,
 * not through sets of every GC function and location of the window.
 */
export function* gcTotalsSteps(wall: Profile): Steps<GcTotals> {
  const gc = new LeafFunctionTest(wall, (name) => name === FRAME_GARBAGE_COLLECTION);
  const countIdx = sampleTypeIndex(wall, 'sample', 'samples');
  const wallIdx = sampleTypeIndex(wall, 'wall');
  const period = Number(wall.period);
  let samples = 0;
  let wallNs = 0;
  let allNs = 0;
  const due = stepEvery(STEP_ENTRIES);
  const list = wall.sample;
  for (let i = 0; i < list.length; i++) {
    if (due()) yield;
    const s = list[i] as (typeof list)[number];
    const n = countIdx >= 0 ? Number(s.value[countIdx] ?? 0) : 1;
    const ns = wallIdx >= 0 ? Number(s.value[wallIdx] ?? 0) : n * period;
    allNs += ns;
    const leaf = s.locationId[0];
    if (leaf === undefined || !gc.has(Number(leaf))) continue;
    samples += n;
    wallNs += ns;
  }
  return { samples, wallNs, share: allNs > 0 ? wallNs / allNs : 0 };
}

/**
 * Put the wall profile's GC pause totals on the window as attributes:
 * `profiler.gc.time_ns`, `profiler.gc.samples`, reading a few hundred samples
 * per step. Independent of the heap sampler (the evidence is in the wall
 * profile). Never throws.
 */
export function* addGcTotalsSteps(window: WindowProfile, diagnostics: Diagnostics): Steps<void> {
  try {
    const gc = yield* gcTotalsSteps(window.wall);
    window.attributes['profiler.gc.time_ns'] = gc.wallNs;
    window.attributes['profiler.gc.samples'] = gc.samples;
  } catch (err) {
    diagnostics.error('heap.gc_totals', err);
  }
}
