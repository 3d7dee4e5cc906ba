import { performance } from 'node:perf_hooks';

/**
 * What spanfuse's own periodic work has cost this thread so far, by kind
 * (each isolate has its own module instance, hence its own totals):
 * - `sliced`: window builds, scrubbing and encoding, run in slices
 *   (`runSliced`; `runSync` on the exit path is not counted);
 * - `stops`: the native profiler stops (a chunk inside a window, each close);
 * - `passes`: thread-state passes run on this thread (`threadStateHost: 'main'`).
 * All of it is synchronous work on the thread, so its wall time is the
 * thread's CPU, give or take preemption. The per-span work (context
 * binding, span processors) and V8's sampler thread are not in it: timing
 * each span would cost more than the span's work.
 */
export interface SelfTime {
  readonly slicedMs: number;
  readonly stopsMs: number;
  readonly passesMs: number;
  /**
   * The sliced work by stage (ms; see {@link SelfStage}), each stage's own
   * time, nested stages apart. What no stage claims (writing files, queueing,
   * the slices' own bookkeeping) is `slicedMs` less their sum.
   */
  readonly stagesMs: Readonly<Partial<Record<SelfStage, number>>>;
  /**
   * The longest single block of each kind so far (ms): one slice (one
   * event-loop turn of window work), one native stop, one pass. These are
   * the longest times spanfuse's periodic work held this thread's event
   * loop at once (a garbage collection that lands inside a block is in it).
   */
  readonly longestMs: Readonly<Record<SelfWork, number>>;
  /**
   * The longest single step of each stage so far (ms, its own time, nested
   * stages apart): a step longer than the slice budget makes its slice
   * overrun it.
   */
  readonly stagesLongestStepMs: Readonly<Partial<Record<SelfStage, number>>>;
}

/**
 * Parts of the sliced work: `assemble` (a window's labelled profile from its
 * native stops), `runtime` (thread states, kernel counters), `heap` (the
 * heap profile and the GC totals), `context_loss`, `tail` (tail spans'
 * figures and labels), `count` (the window's sample counts), `scrub`,
 * `encode` (pprof and OTLP).
 */
export type SelfStage = 'assemble' | 'runtime' | 'heap' | 'context_loss' | 'tail' | 'count' | 'scrub' | 'encode';

let slicedMs = 0;
let stopsMs = 0;
let passesMs = 0;
const stagesMs: Partial<Record<SelfStage, number>> = {};
const longestMs: Record<SelfWork, number> = { sliced: 0, stops: 0, passes: 0 };
const stagesLongestStepMs: Partial<Record<SelfStage, number>> = {};

/** Add `ms`, one step's own time, to `stage` (see `staged` in slices.ts). */
export function addStageTime(stage: SelfStage, ms: number): void {
  stagesMs[stage] = (stagesMs[stage] ?? 0) + ms;
  if (ms > (stagesLongestStepMs[stage] ?? 0)) stagesLongestStepMs[stage] = ms;
}

export type SelfWork = 'sliced' | 'stops' | 'passes';

/** Add `ms`, one block of `kind` (a slice, a stop, a pass). */
export function addSelfTime(kind: SelfWork, ms: number): void {
  if (kind === 'sliced') slicedMs += ms;
  else if (kind === 'stops') stopsMs += ms;
  else passesMs += ms;
  if (ms > longestMs[kind]) longestMs[kind] = ms;
}

/** Run `fn` and add its time to `kind`. */
export function timedSelf<T>(kind: SelfWork, fn: () => T): T {
  const start = performance.now();
  try {
    return fn();
  } finally {
    addSelfTime(kind, performance.now() - start);
  }
}

export function selfTimeTotals(): SelfTime {
  return { slicedMs, stopsMs, passesMs, stagesMs: { ...stagesMs }, longestMs: { ...longestMs }, stagesLongestStepMs: { ...stagesLongestStepMs } };
}
