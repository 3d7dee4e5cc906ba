import { PerformanceObserver, performance } from 'node:perf_hooks';
import type { AttributeValue } from '../core/window.js';

/**
 * Event-loop delay and GC pauses (PerformanceObserver 'gc') of the thread
 * that starts it, per window.
 *
 * Event-loop delay is measured the way perf_hooks' monitorEventLoopDelay
 * does (how late a timer fires), but in JS so that the running total is a
 * plain number: a span reads it at start and end for free, where the native
 * histogram's `mean` walks every bucket (measured ~100 µs per read). Per
 * window: p50/p99/max of the lateness samples and their total.
 *
 * The timer runs every `intervalMs` (20) while the thread is busy, and backs
 * off, doubling up to `maxIntervalMs` (320), while it is idle: no lateness,
 * no I/O event handled since the last firing and no span read. Each firing
 * wakes an idle thread, and 50 wake-ups a second cost an idle process about
 * 1% of a core on this project's VMs
 * (bench/results/idle-2026-12-02.md). A span's read snaps the period back at
 * once, so spans always see the busy rate; what an idle stretch can miss is a
 * block that starts during it and ends before the next firing outside any span.
 */
const MAX_SAMPLES = 4096;
/** Lateness (ms) of a firing that counts as busy (idle firings are 0-1 ms late). */
const BUSY_LATE_MS = 2;

/**
 * I/O events the loop has handled (libuv metrics; Node >= 20.18 and 22.8).
 * eventLoopUtilization cannot tell: with the wall profiler's signals an idle
 * loop reads as 25-65% active.
 */
function ioEvents(): number {
  const info = (performance.nodeTiming as { uvMetricsInfo?: { events?: number } }).uvMetricsInfo;
  return typeof info?.events === 'number' ? info.events : 0;
}

export class LoopGcMonitor {
  readonly #intervalMs: number;
  readonly #maxIntervalMs: number;
  /** The period the armed timer was set with. */
  #periodMs: number;
  #timer: NodeJS.Timeout | undefined;
  #events = 0;
  /** A span read the total since the last firing. */
  #read = false;
  #obs: PerformanceObserver | undefined;
  #last = 0;
  /** Cumulative lateness of the timer, ns, since start. */
  #totalNs = 0;
  readonly #samples = new Float64Array(MAX_SAMPLES);
  #n = 0;
  #windowNs = 0;
  #windowMaxNs = 0;
  #gcPauseNs = 0;
  #gcCount = 0;
  #gcMaxNs = 0;

  constructor(intervalMs = 20, maxIntervalMs = 16 * intervalMs) {
    this.#intervalMs = intervalMs;
    this.#maxIntervalMs = Math.max(intervalMs, maxIntervalMs);
    this.#periodMs = intervalMs;
  }

  /** The timer's current period, ms (`intervalMs` while busy). */
  get periodMs(): number {
    return this.#periodMs;
  }

  start(): void {
    if (this.#timer) return;
    this.#events = ioEvents();
    this.#arm(this.#intervalMs);
    this.#obs = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        const ns = e.duration * 1e6;
        this.#gcPauseNs += ns;
        this.#gcCount++;
        if (ns > this.#gcMaxNs) this.#gcMaxNs = ns;
      }
    });
    this.#obs.observe({ entryTypes: ['gc'] });
  }

  /** (Re)start the timer from now: the same period reuses it, another replaces it. */
  #arm(periodMs: number): void {
    this.#last = performance.now();
    const timer = this.#timer;
    if (timer !== undefined && periodMs === this.#periodMs) {
      timer.refresh();
      return;
    }
    if (timer !== undefined) clearTimeout(timer);
    this.#periodMs = periodMs;
    this.#timer = setTimeout(this.#onTimer, periodMs);
    this.#timer.unref();
  }

  readonly #onTimer = (): void => {
    if (this.#timer === undefined) return;
    const lateMs = this.#tick();
    const events = ioEvents();
    const busy = this.#read || lateMs > BUSY_LATE_MS || events !== this.#events;
    this.#events = events;
    this.#read = false;
    this.#arm(busy ? this.#intervalMs : Math.min(this.#maxIntervalMs, this.#periodMs * 2));
  };

  /** Record the lateness of the firing due now; returns it in ms. */
  #tick(): number {
    const now = performance.now();
    const lateMs = Math.max(0, now - this.#last - this.#periodMs);
    const lateNs = lateMs * 1e6;
    this.#totalNs += lateNs;
    this.#windowNs += lateNs;
    if (lateNs > this.#windowMaxNs) this.#windowMaxNs = lateNs;
    // Bounded: past MAX_SAMPLES per window, keep a uniform-ish subset.
    if (this.#n < MAX_SAMPLES) this.#samples[this.#n++] = lateNs;
    else this.#samples[Math.floor(Math.random() * MAX_SAMPLES)] = lateNs;
    return lateMs;
  }

  /**
   * Cumulative event-loop delay since start, ns (changes when the timer
   * fires). A read marks the thread busy: a backed-off timer is re-armed at
   * the busy period (it was not late: it had not fired yet).
   */
  cumulativeDelayNs(): number {
    this.#read = true;
    if (this.#periodMs !== this.#intervalMs && this.#timer !== undefined) {
      const now = performance.now();
      if (now - this.#last < this.#periodMs) this.#arm(this.#intervalMs);
    }
    return this.#totalNs;
  }

  /** Window figures; resets the per-window accumulators. */
  collectWindow(): Record<string, AttributeValue> {
    const out: Record<string, AttributeValue> = {};
    if (this.#timer && this.#n > 0) {
      const sorted = this.#samples.slice(0, this.#n).sort();
      const q = (p: number): number => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0);
      out['runtime.eventloop.delay.p50_ns'] = q(0.5);
      out['runtime.eventloop.delay.p99_ns'] = q(0.99);
      out['runtime.eventloop.delay.max_ns'] = Math.round(this.#windowMaxNs);
      out['runtime.eventloop.delay.total_ns'] = Math.round(this.#windowNs);
    }
    if (this.#obs) {
      out['runtime.gc.pause.total_ns'] = Math.round(this.#gcPauseNs);
      out['runtime.gc.pause.max_ns'] = Math.round(this.#gcMaxNs);
      out['runtime.gc.count'] = this.#gcCount;
    }
    this.#n = 0;
    this.#windowNs = 0;
    this.#windowMaxNs = 0;
    this.#gcPauseNs = 0;
    this.#gcCount = 0;
    this.#gcMaxNs = 0;
    return out;
  }

  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#obs?.disconnect();
    this.#timer = undefined;
    this.#obs = undefined;
  }
}
