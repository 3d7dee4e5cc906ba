import { PerformanceObserver, performance } from 'node:perf_hooks';
import type { AttributeValue } from '../core/window.js';

/**
 * Event-loop delay and GC pauses (PerformanceObserver 'gc') of the thread
 * that starts it, per window.
 *
 * Event-loop delay is measured the way perf_hooks' monitorEventLoopDelay
 * does (how late a fixed-interval timer fires), but in JS so that the running
 * total is a plain number: a span reads it at start and end for free, where
 * the native histogram's `mean` walks every bucket (measured ~100 µs per
 * read). Per window: p50/p99/max of the lateness samples and their total.
 */
const MAX_SAMPLES = 4096;

export class LoopGcMonitor {
  readonly #intervalMs: number;
  #timer: NodeJS.Timeout | undefined;
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

  constructor(intervalMs = 20) {
    this.#intervalMs = intervalMs;
  }

  start(): void {
    if (this.#timer) return;
    this.#last = performance.now();
    this.#timer = setInterval(() => this.#tick(), this.#intervalMs);
    this.#timer.unref();
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

  #tick(): void {
    const now = performance.now();
    const lateNs = Math.max(0, (now - this.#last - this.#intervalMs) * 1e6);
    this.#last = now;
    this.#totalNs += lateNs;
    this.#windowNs += lateNs;
    if (lateNs > this.#windowMaxNs) this.#windowMaxNs = lateNs;
    // Bounded: past MAX_SAMPLES per window, keep a uniform-ish subset.
    if (this.#n < MAX_SAMPLES) this.#samples[this.#n++] = lateNs;
    else this.#samples[Math.floor(Math.random() * MAX_SAMPLES)] = lateNs;
  }

  /** Cumulative event-loop delay since start, ns (changes when the timer fires). */
  cumulativeDelayNs(): number {
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
    if (this.#timer) clearInterval(this.#timer);
    this.#obs?.disconnect();
    this.#timer = undefined;
    this.#obs = undefined;
  }
}
