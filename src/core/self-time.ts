import { performance } from 'node:perf_hooks';

/**
 * What spanfuse's own periodic work has cost this thread so far, by kind
 * (each isolate has its own module instance, hence its own totals):
 * - `sliced`: window builds, scrubbing and encoding, run in slices
 *   (`runSliced`; `runSync` on the exit path is not counted);
 * - `stops`: the native profiler stops (a chunk inside a window, each close);
 * - `passes`: thread-state passes run on this thread (`threadStateHost: 'main'`).
 * The per-span work (context binding, span processors) and V8's sampler
 * thread are not in it: timing each span would cost more than the span's work.
 *
 * The figures are wall time: the thread is busy with this work from start
 * to end. Where Node reads a thread's CPU clock (`process.threadCpuUsage()`,
 * Node >= 23.9) `cpu` has the same kinds in CPU time: on a loaded or
 * single-core machine the wall figure also counts the time other threads of
 * the process (GC helpers, V8's profiler thread, compiler jobs) or other
 * processes held the core, and reads higher (the overhead bench's server,
 * pinned to one core, Node 24: 8.1 µs of wall against 6.4 µs of CPU per
 * request).
 */
export interface SelfTime {
  readonly slicedMs: number;
  readonly stopsMs: number;
  readonly passesMs: number;
  /** The same work in this thread's CPU time (ms), where the runtime can read it. */
  readonly cpu?: SelfCpuTime;
}

export interface SelfCpuTime {
  readonly slicedMs: number;
  readonly stopsMs: number;
  readonly passesMs: number;
}

export type SelfWork = 'sliced' | 'stops' | 'passes';

/** A start of own work, from {@link selfStart}. */
export interface SelfStart {
  readonly wallMs: number;
  /** NaN where the thread's CPU clock cannot be read. */
  readonly cpuMs: number;
}

const wall = { sliced: 0, stops: 0, passes: 0 };
const cpu = { sliced: 0, stops: 0, passes: 0 };

type ThreadCpuUsage = () => NodeJS.CpuUsage;
const threadCpuUsage = (process as { threadCpuUsage?: ThreadCpuUsage }).threadCpuUsage?.bind(process);

/** This thread's CPU time (ms), NaN where Node cannot read it. One getrusage(RUSAGE_THREAD). */
function threadCpuMs(): number {
  if (threadCpuUsage === undefined) return Number.NaN;
  const u = threadCpuUsage();
  return (u.user + u.system) / 1000;
}

/** Mark the start of own work; pass it to {@link addSelfTimeSince} at its end. */
export function selfStart(): SelfStart {
  return { wallMs: performance.now(), cpuMs: threadCpuMs() };
}

/** Add the time since `start` to `kind`. */
export function addSelfTimeSince(kind: SelfWork, start: SelfStart): void {
  wall[kind] += performance.now() - start.wallMs;
  if (!Number.isNaN(start.cpuMs)) cpu[kind] += threadCpuMs() - start.cpuMs;
}

/** Run `fn` and add its time to `kind`. */
export function timedSelf<T>(kind: SelfWork, fn: () => T): T {
  const start = selfStart();
  try {
    return fn();
  } finally {
    addSelfTimeSince(kind, start);
  }
}

export function selfTimeTotals(): SelfTime {
  const out = { slicedMs: wall.sliced, stopsMs: wall.stops, passesMs: wall.passes };
  if (threadCpuUsage === undefined) return out;
  return { ...out, cpu: { slicedMs: cpu.sliced, stopsMs: cpu.stops, passesMs: cpu.passes } };
}
