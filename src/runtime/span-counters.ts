import type { SpanCounterSource } from '../core/counters.js';
import type { LoopGcMonitor } from './loop-gc.js';
import type { PerfGroup } from './perf-events.js';
import type { StateReader } from './state-reader.js';
import type { ThreadCounterReader } from './thread-stats.js';

/**
 * Span window counters for one thread (create it on that thread). `begin()`
 * takes one Float64Array snapshot, `end()` returns the deltas that exist.
 *
 * These are deltas of the *thread* over the span's window: across `await`,
 * other work that ran on the same thread in between is included. Sources:
 * - context switches and page faults: getrusage(RUSAGE_THREAD) read at start
 *   and end (exact; needs koffi; ~2-4 µs per span measured), or, in 'sampler'
 *   mode, the sampler's last reading of the thread's /proc status and stat
 *   (free per span, resolution one sampler interval);
 * - futex wait and run-queue delay: read from the thread-state sampler's shared
 *   table. Sampler-derived counters are present only when at least one
 *   sampler pass fell inside the span, and then cover the sampler intervals
 *   overlapping it (± one interval; 100 ms at the default 10 Hz): a span
 *   shorter than that gets no such counter rather than a made-up zero;
 * - event-loop delay: the cumulative excess of the perf_hooks histogram
 *   (recorded when the loop's timer fires, so delay caused by a synchronous
 *   span shows up only if the timer fires before the span ends);
 * - cycles, instructions, L3 misses: a perf group, only where a PMU exists.
 */
const I_VOL = 0;
const I_INVOL = 1;
const I_MINFLT = 2; // the sampler writes total faults here (see switchesAndFaults)
const I_MAJFLT = 3;
const I_FUTEX = 4;
const I_RUNQ = 5;
const I_LOOP = 6;
const I_PASSES = 7;
const I_HW = 8;

/**
 * With live reads (exact switches, hardware counters), `begin()` hands out
 * the last snapshot while it is younger than this: a snapshot costs
 * syscalls (getrusage, perf read) worth several µs, paid at most once per
 * millisecond instead of once per span. Start values are thus
 * up to this old (counters of the thread only grow, so a delta may include
 * up to this much work just before the span, never less than the span's own).
 */
export const DEFAULT_BEGIN_REUSE_MS = 1;

export interface SpanCounterDeps {
  readonly tid: number;
  /** See DEFAULT_BEGIN_REUSE_MS (live reads only); 0 takes a snapshot at every begin(). */
  readonly beginReuseMs?: number;
  /** Exact reads at start and end; without it, the sampler's readings. */
  readonly threadCounters?: ThreadCounterReader;
  readonly state?: StateReader;
  readonly loop?: LoopGcMonitor;
  readonly hardware?: PerfGroup;
}

export class ThreadWindowCounters implements SpanCounterSource {
  readonly #d: SpanCounterDeps;
  readonly #size: number;
  readonly #hwNames: readonly string[];
  readonly #hw: Float64Array;
  readonly #reuseMs: number;
  #last: Float64Array | undefined;
  #lastAt = 0;
  /** Pass count and loop delay total the last snapshot was made at (see #beginFromTables). */
  #lastPasses = Number.NaN;
  #lastDelay = Number.NaN;

  constructor(deps: SpanCounterDeps) {
    this.#d = deps;
    this.#reuseMs = deps.beginReuseMs ?? DEFAULT_BEGIN_REUSE_MS;
    this.#hwNames = deps.hardware?.names ?? [];
    this.#size = I_HW + this.#hwNames.length;
    this.#hw = new Float64Array(this.#hwNames.length);
  }

  begin(): unknown {
    const d = this.#d;
    if (d.threadCounters === undefined && d.hardware === undefined) return this.#beginFromTables(d);
    const now = performance.now();
    const last = this.#last;
    if (last !== undefined && now - this.#lastAt < this.#reuseMs) return last;
    d.state?.freshen();
    return this.#snapshot(now);
  }

  /**
   * Without live reads every start value comes from the thread-state table
   * (written by its passes) and the event-loop delay total (written by its
   * timer): while neither moved, a new snapshot would hold the same numbers,
   * so the last one is handed out again. Snapshots are thus made at the
   * rate of passes and timer ticks, not of spans, with no loss of precision.
   */
  #beginFromTables(d: SpanCounterDeps): unknown {
    d.state?.freshen();
    const passes = d.state?.passes() ?? -1;
    const delay = d.loop?.cumulativeDelayNs() ?? -1;
    const last = this.#last;
    if (last !== undefined && passes === this.#lastPasses && delay === this.#lastDelay) return last;
    this.#lastPasses = passes;
    this.#lastDelay = delay;
    return this.#snapshot(0);
  }

  #snapshot(now: number): Float64Array {
    const t = new Float64Array(this.#size).fill(Number.NaN);
    this.#fill(t);
    this.#last = t;
    this.#lastAt = now;
    return t;
  }

  end(token: unknown): Readonly<Record<string, number>> {
    const out: Record<string, number> = {};
    if (!(token instanceof Float64Array) || token.length !== this.#size) return out;
    const now = new Float64Array(this.#size).fill(Number.NaN);
    this.#d.state?.freshen();
    this.#fill(now);
    const put = (name: string, i: number): void => {
      const d = (now[i] ?? Number.NaN) - (token[i] ?? Number.NaN);
      if (Number.isFinite(d)) out[name] = Math.max(0, Math.round(d));
    };
    const sampled = (now[I_PASSES] ?? 0) > (token[I_PASSES] ?? 0);
    if (this.#d.threadCounters || sampled) {
      put('profiler.ctx_switches.voluntary', I_VOL);
      put('profiler.ctx_switches.involuntary', I_INVOL);
      const faults = (now[I_MINFLT] ?? NaN) + (now[I_MAJFLT] ?? NaN) - (token[I_MINFLT] ?? NaN) - (token[I_MAJFLT] ?? NaN);
      if (Number.isFinite(faults)) out['profiler.page_faults'] = Math.max(0, faults);
    }
    if (sampled) {
      put('profiler.futex.wait_ns', I_FUTEX);
      put('profiler.runqueue.delay_ns', I_RUNQ);
    }
    put('profiler.eventloop.delay_ns', I_LOOP);
    for (let i = 0; i < this.#hwNames.length; i++) put(this.#hwNames[i] ?? '', I_HW + i);
    return out;
  }

  #fill(t: Float64Array): void {
    const d = this.#d;
    if (d.threadCounters && !d.threadCounters.readSwitchesAndFaults(t)) t.fill(Number.NaN, 0, 4);
    if (d.state) {
      t[I_PASSES] = d.state.passes();
      // Without exact reads, switches come from the sampler; faults land in
      // I_MINFLT (the sampler sums minor and major).
      if (d.state.spanSnapshot(d.tid, t, I_FUTEX, !d.threadCounters, I_VOL) && !d.threadCounters) t[I_MAJFLT] = 0;
    }
    if (d.loop) t[I_LOOP] = d.loop.cumulativeDelayNs();
    if (d.hardware && d.hardware.read(this.#hw)) t.set(this.#hw, I_HW);
  }
}

/** Before `start()` or where nothing runs: every counter absent. */
export class SpanWindowCountersUnavailable implements SpanCounterSource {
  begin(): unknown {
    return undefined;
  }
  end(): Readonly<Record<string, number>> {
    return {};
  }
}
