import { PerformanceObserver, monitorEventLoopDelay } from 'node:perf_hooks';
import type { IntervalHistogram } from 'node:perf_hooks';
import type { AttributeValue } from '../core/window.js';

/**
 * Event-loop delay (perf_hooks histogram) and GC pauses (PerformanceObserver
 * 'gc') of the thread that starts it, per window.
 *
 * The histogram records the time between ticks of a `resolutionMs` timer, so
 * the delay is what exceeds the resolution. A cumulative total of that excess
 * (sum ≈ mean × count, minus resolution × count) lets a span take a cheap
 * delta at its start and end.
 */
export class LoopGcMonitor {
  readonly #resolutionNs: number;
  #h: IntervalHistogram | undefined;
  #obs: PerformanceObserver | undefined;
  /** Excess delay of histograms already reset, ns. */
  #baseExcessNs = 0;
  #gcPauseNs = 0;
  #gcCount = 0;
  #gcMaxNs = 0;

  constructor(resolutionMs = 20) {
    this.#resolutionNs = resolutionMs * 1e6;
  }

  start(): void {
    if (this.#h) return;
    this.#h = monitorEventLoopDelay({ resolution: this.#resolutionNs / 1e6 });
    this.#h.enable();
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

  /** Cumulative event-loop delay beyond the timer resolution, ns. */
  cumulativeDelayNs(): number {
    const h = this.#h;
    if (!h) return this.#baseExcessNs;
    return this.#baseExcessNs + this.#excess(h);
  }

  #excess(h: IntervalHistogram): number {
    const count = h.count;
    if (count === 0) return 0;
    return Math.max(0, (h.mean - this.#resolutionNs) * count);
  }

  /** Window figures; resets the per-window accumulators. */
  collectWindow(): Record<string, AttributeValue> {
    const out: Record<string, AttributeValue> = {};
    const h = this.#h;
    if (h && h.count > 0) {
      const excess = (v: number): number => Math.max(0, Math.round(v - this.#resolutionNs));
      out['runtime.eventloop.delay.p50_ns'] = excess(h.percentile(50));
      out['runtime.eventloop.delay.p99_ns'] = excess(h.percentile(99));
      out['runtime.eventloop.delay.max_ns'] = excess(h.max);
      out['runtime.eventloop.delay.total_ns'] = Math.round(this.#excess(h));
      this.#baseExcessNs += this.#excess(h);
      h.reset();
    }
    if (this.#obs) {
      out['runtime.gc.pause.total_ns'] = Math.round(this.#gcPauseNs);
      out['runtime.gc.pause.max_ns'] = Math.round(this.#gcMaxNs);
      out['runtime.gc.count'] = this.#gcCount;
    }
    this.#gcPauseNs = 0;
    this.#gcCount = 0;
    this.#gcMaxNs = 0;
    return out;
  }

  stop(): void {
    this.#h?.disable();
    this.#obs?.disconnect();
    this.#h = undefined;
    this.#obs = undefined;
  }
}
