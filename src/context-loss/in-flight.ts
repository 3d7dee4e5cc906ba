import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';

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

/** The clock's origin, read once (the getter makes a number at each call). */
const ORIGIN_MS = performance.timeOrigin;

/**
 * Counts the spans in flight on this thread (started, not yet ended) and
 * remembers only when the count leaves or returns to zero: two integer
 * updates per span, a clock read only on those transitions, and no
 * allocation (the times go to a fixed ring). The clock is read here
 * (monotonic, µs, as V8 times samples): a span's own start time would not
 * do, the SDK takes it from `Date.now()` in whole milliseconds, and the
 * JS work just before a span starts would then count as in flight. Each
 * thread has its own instance: a worker's spans are its own.
 */
export class InFlightSpans implements SpanProcessor {
  #count = 0;
  readonly #times = new Float64Array(CAPACITY);
  /** Transitions written since creation; the ring holds the last CAPACITY. */
  #written = 0;
  /** Value of #written at the last `take()`. */
  #taken = 0;
  #busyAtTake = false;

  get inFlight(): number {
    return this.#count;
  }

  onStart(_span: Span, _ctx: Context): void {
    if (this.#count++ === 0) this.#mark();
  }

  onEnd(_span: ReadableSpan): void {
    if (this.#count === 0) return;
    if (--this.#count === 0) this.#mark();
  }

  #mark(): void {
    this.#times[this.#written % CAPACITY] = ORIGIN_MS + performance.now();
    this.#written++;
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
