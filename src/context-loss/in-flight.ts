import type { Context, HrTime } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { hrTimeToMs } from '../tracing/time.js';

/** Transitions kept between two window closes; beyond, the oldest are lost. */
const CAPACITY = 8192;

/** When spans were in flight on this thread between `fromMs` and `toMs`. */
export interface InFlightTimeline {
  /** In flight at `fromMs` (or, when `overflowed`, at the oldest kept transition). */
  readonly busyAtStart: boolean;
  /** Alternating transition times (Unix ms), sorted: the first flips `busyAtStart`. */
  readonly transitions: Float64Array;
  /** More transitions than kept: before the first kept one, the state is a guess (busy). */
  readonly overflowed: boolean;
}

/** The clock's origin, read once (the getter makes a number each call). */
const ORIGIN_MS = performance.timeOrigin;
/** How far past the last clock read a span's time is taken without reading the clock (ms). */
const HORIZON_MS = 1000;

/**
 * Counts the spans in flight on this thread (started, not yet ended) and
 * remembers only when the count leaves or returns to zero: two integer
 * updates per span and no allocation (the times go to a fixed ring). A
 * transition's time is the span's own start or end time, which the SDK
 * took from the same clock just before (a clock read of ours at most once
 * a second, see #mark); kept in order, so a span given an earlier explicit
 * time counts from the last transition. Each thread has its own instance:
 * a worker's spans are its own.
 */
export class InFlightSpans implements SpanProcessor {
  #count = 0;
  readonly #times = new Float64Array(CAPACITY);
  /** Transitions written since creation; the ring holds the last CAPACITY. */
  #written = 0;
  /** Value of #written at the last `take()`. */
  #taken = 0;
  #busyAtTake = false;
  /** Span times up to this (Unix ms) are taken as they are; see #mark. */
  #horizon = 0;

  get inFlight(): number {
    return this.#count;
  }

  onStart(span: Span, _ctx: Context): void {
    if (this.#count++ === 0) this.#mark((span as Partial<ReadableSpan>).startTime);
  }

  onEnd(span: ReadableSpan): void {
    if (this.#count === 0) return;
    if (--this.#count === 0) this.#mark(span.endTime);
  }

  /** Record a transition at `at` (Unix time), or now when the span has no usable time. */
  #mark(at: HrTime | undefined): void {
    const w = this.#written;
    let ms = hrTimeToMs(at);
    // A time past the horizon (or none) is checked against the clock, which
    // is thus read at most once per HORIZON_MS for spans with SDK times; an
    // explicit future time is taken as now.
    if (!(ms > 0 && ms <= this.#horizon)) {
      const now = ORIGIN_MS + performance.now();
      this.#horizon = now + HORIZON_MS;
      if (!(ms > 0 && ms <= now)) ms = now;
    }
    // Transitions stay sorted (busyAt searches them).
    if (w > 0) ms = Math.max(ms, this.#times[(w - 1) % CAPACITY] ?? 0);
    this.#times[w % CAPACITY] = ms;
    this.#written = w + 1;
  }

  /** The transitions since the last call (window close); O(transitions). */
  take(): InFlightTimeline {
    const n = this.#written - this.#taken;
    const overflowed = n > CAPACITY;
    const kept = Math.min(n, CAPACITY);
    const first = this.#written - kept;
    const transitions = new Float64Array(kept);
    for (let i = 0; i < kept; i++) transitions[i] = this.#times[(first + i) % CAPACITY] ?? 0;
    // Each transition flips the state. After an overflow, the state before the
    // oldest kept one follows from the state now and their parity.
    const busyNow = this.#count > 0;
    const busyAtStart = overflowed ? (kept % 2 === 0) === busyNow : this.#busyAtTake;
    this.#taken = this.#written;
    this.#busyAtTake = busyNow;
    return { busyAtStart, transitions, overflowed };
  }

  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

/** Whether spans were in flight at `tMs`: binary search of the transitions. */
export function busyAt(t: InFlightTimeline, tMs: number): boolean {
  const a = t.transitions;
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((a[mid] ?? 0) <= tMs) lo = mid + 1;
    else hi = mid;
  }
  // `lo` transitions happened at or before tMs.
  if (t.overflowed && lo === 0) return true;
  return lo % 2 === 0 ? t.busyAtStart : !t.busyAtStart;
}
