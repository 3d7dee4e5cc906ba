import type { StateViews } from './state-table.js';
import {
  F_FAULTS,
  F_FUTEX,
  F_IVCSW,
  F_OFFCPU,
  F_VCSW,
  F_ONCPU,
  F_RUNQUEUE,
  H_TICKS,
  MAX_SLOTS,
  REASONS_PER_SLOT,
  findSlot,
  valueIndex,
} from './state-table.js';

/** Cumulative off-CPU accounting of one thread at one moment. */
export interface ThreadStateTotals {
  readonly offCpuNs: number;
  readonly futexNs: number;
  /** reason key -> cumulative ns */
  readonly reasons: ReadonlyMap<number, number>;
}

export type StateSnapshot = ReadonlyMap<number, ThreadStateTotals>;

/**
 * Synchronous reads of the shared state table, from any thread. Slot lookups
 * are cached per tid and re-validated on every read.
 */
export class StateReader {
  readonly views: StateViews;
  readonly #slotHint = new Map<number, number>();
  #lastTid = -1;
  #lastSlot = 0;
  #freshen: (() => void) | undefined;

  constructor(views: StateViews) {
    this.views = views;
  }

  /**
   * Where the sampler runs on the reading thread: `fn` runs its pass if one
   * is overdue. Called by {@link freshen} (before a span's counters are read)
   * and {@link snapshot}.
   */
  setFreshen(fn: (() => void) | undefined): void {
    this.#freshen = fn;
  }

  /** Bring the table up to date where the sampler runs on this thread (no-op otherwise). */
  freshen(): void {
    this.#freshen?.();
  }

  #slot(tid: number): number {
    const slot = findSlot(this.views, tid, this.#slotHint.get(tid));
    if (slot >= 0) this.#slotHint.set(tid, slot);
    else this.#slotHint.delete(tid);
    return slot;
  }

  /** A cumulative field of `tid`, or undefined if the thread is not tracked. */
  #field(tid: number, field: number): number | undefined {
    const slot = this.#slot(tid);
    return slot < 0 ? undefined : this.views.values[valueIndex(slot, field)];
  }

  futexNs(tid: number): number | undefined {
    return this.#field(tid, F_FUTEX);
  }

  offCpuNs(tid: number): number | undefined {
    return this.#field(tid, F_OFFCPU);
  }

  /** schedstat run-queue delay, as last read by the sampler (JS threads only). */
  runqueueNs(tid: number): number | undefined {
    const v = this.#field(tid, F_RUNQUEUE);
    return v === 0 && this.#field(tid, F_ONCPU) === 0 ? undefined : v;
  }

  /** Sampler passes so far. */
  passes(): number {
    return Atomics.load(this.views.header, H_TICKS);
  }

  /**
   * One lookup for a span counter snapshot: writes [futexNs, runqueueNs] at
   * `at`, and [voluntary, involuntary, faults] at `atSwitches` when
   * `withSwitches` (NaN where unknown). False if the thread is not tracked.
   */
  spanSnapshot(tid: number, out: Float64Array, at: number, withSwitches: boolean, atSwitches: number): boolean {
    let slot = this.#lastSlot;
    if (this.#lastTid !== tid || Atomics.load(this.views.slotTid, slot) !== tid) {
      slot = this.#slot(tid);
      if (slot < 0) return false;
      this.#lastTid = tid;
      this.#lastSlot = slot;
    }
    const v = this.views.values;
    const base = valueIndex(slot, 0);
    out[at] = v[base + F_FUTEX] ?? Number.NaN;
    out[at + 1] = v[base + F_RUNQUEUE] ?? Number.NaN;
    if (withSwitches) {
      out[atSwitches] = v[base + F_VCSW] ?? Number.NaN;
      out[atSwitches + 1] = v[base + F_IVCSW] ?? Number.NaN;
      out[atSwitches + 2] = v[base + F_FAULTS] ?? Number.NaN;
    }
    return true;
  }

  snapshot(): StateSnapshot {
    this.freshen();
    const out = new Map<number, ThreadStateTotals>();
    const v = this.views;
    for (let slot = 0; slot < MAX_SLOTS; slot++) {
      const tid = Atomics.load(v.slotTid, slot);
      if (tid === 0) continue;
      const reasons = new Map<number, number>();
      const base = slot * REASONS_PER_SLOT;
      for (let i = 0; i < REASONS_PER_SLOT; i++) {
        const key = Atomics.load(v.reasonKey, base + i);
        if (key === 0) break;
        reasons.set(key, v.reasonNs[base + i] ?? 0);
      }
      out.set(tid, {
        offCpuNs: v.values[valueIndex(slot, F_OFFCPU)] ?? 0,
        futexNs: v.values[valueIndex(slot, F_FUTEX)] ?? 0,
        reasons,
      });
    }
    return out;
  }
}
