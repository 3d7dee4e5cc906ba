import type { WindowProfile } from '../core/window.js';
import { InFlightSpans } from './in-flight.js';
import { contextLossSteps } from './window-figure.js';
import type { Steps } from '../core/slices.js';
import type { ContextLoss, LostFunction } from './window-figure.js';

export interface ContextLossStats {
  readonly windows: number;
  /** Totals over every window of this thread. */
  readonly cpuSamples: number;
  readonly inFlightSamples: number;
  readonly unattributedSamples: number;
  readonly share: number;
  /** Over every window, by samples. */
  readonly topFunctions: readonly LostFunction[];
  /** The last closed window. */
  readonly lastWindow: ContextLoss | undefined;
  /** Spans in flight on this thread now. */
  readonly spansInFlight: number;
}

/** Attribute / pprof comment prefix. */
export const CONTEXT_LOSS_PREFIX = 'profiler.context_loss.';
const KEEP_FUNCTIONS = 64;

/**
 * Context-loss detection of one thread: the span processor that counts spans
 * in flight, and per window the figure (OTLP window attributes, pprof
 * comments, `stats()`).
 */
export class ContextLossStage {
  /** Add to every span pipeline of this thread. */
  readonly spans = new InFlightSpans();
  #windows = 0;
  #cpu = 0;
  #inFlight = 0;
  #lost = 0;
  readonly #functions = new Map<string, number>();
  #last: ContextLoss | undefined;

  /**
   * Compute the window's figure and attach it, in steps of a few hundred
   * samples; run once per closed window.
   */
  *fillSteps(w: WindowProfile): Steps<void> {
    const f = yield* contextLossSteps(w.wall, this.spans.take());
    this.#last = f;
    this.#windows++;
    this.#cpu += f.cpuSamples;
    this.#inFlight += f.inFlightSamples;
    this.#lost += f.unattributedSamples;
    for (const t of f.topFunctions) this.#functions.set(t.name, (this.#functions.get(t.name) ?? 0) + t.samples);
    if (this.#functions.size > KEEP_FUNCTIONS) {
      const keep = [...this.#functions.entries()].sort((a, b) => b[1] - a[1]).slice(0, KEEP_FUNCTIONS / 2);
      this.#functions.clear();
      for (const [k, v] of keep) this.#functions.set(k, v);
    }
    const a = w.attributes;
    const p = CONTEXT_LOSS_PREFIX;
    a[`${p}cpu_samples`] = f.cpuSamples;
    a[`${p}in_flight_samples`] = f.inFlightSamples;
    a[`${p}unattributed_samples`] = f.unattributedSamples;
    a[`${p}share`] = round(f.share);
    f.topFunctions.forEach((t, i) => {
      a[`${p}top_function.${i}`] = `${t.name} samples=${t.samples} share=${round(t.share)}`;
    });
    f.topStacks.forEach((t, i) => {
      a[`${p}top_stack.${i}`] = `${t.stack} samples=${t.samples}`;
    });
    if (f.approximate) a[`${p}approximate`] = true;
    // pprof has no attribute table: the same figures as comments.
    const st = w.wall.stringTable;
    for (const [k, v] of Object.entries(a)) if (k.startsWith(p)) w.wall.comment.push(st.dedup(`${k}=${String(v)}`));
  }

  stats(): ContextLossStats {
    const topFunctions = [...this.#functions.entries()]
      .sort((x, y) => y[1] - x[1])
      .slice(0, 5)
      .map(([name, samples]) => ({ name, samples, share: this.#lost === 0 ? 0 : round(samples / this.#lost) }));
    return {
      windows: this.#windows,
      cpuSamples: this.#cpu,
      inFlightSamples: this.#inFlight,
      unattributedSamples: this.#lost,
      share: this.#inFlight === 0 ? 0 : round(this.#lost / this.#inFlight),
      topFunctions,
      lastWindow: this.#last,
      spansInFlight: this.spans.inFlight,
    };
  }
}

function round(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}
