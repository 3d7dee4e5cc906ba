import { SpanKind } from '@opentelemetry/api';
import { LogSketch } from './sketch.js';
import type { TailRule, TailVerdict } from './types.js';

const KIND_NAMES: Readonly<Record<number, string>> = {
  [SpanKind.INTERNAL]: 'INTERNAL',
  [SpanKind.SERVER]: 'SERVER',
  [SpanKind.CLIENT]: 'CLIENT',
  [SpanKind.PRODUCER]: 'PRODUCER',
  [SpanKind.CONSUMER]: 'CONSUMER',
};

/**
 * Operation key: span name, the route when the name does not already carry
 * it, and the kind: `GET /users/:id (SERVER)`.
 */
export function operationKey(name: string, kind: SpanKind, route: string | undefined): string {
  const k = KIND_NAMES[kind] ?? String(kind);
  if (route === undefined || route === '' || name.endsWith(route)) return `${name} (${k})`;
  return `${name} ${route} (${k})`;
}

/** Key of the one operation that takes every span once the cap is reached. */
export const OVERFLOW_OPERATION = '(other operations)';

/** One operation: its latency sketch and the rule that decides its tail. */
export class Operation {
  readonly key: string;
  readonly rule: TailRule;
  readonly #sketch: LogSketch | undefined;
  readonly #warmup: number;
  readonly #halfLifeS: number;
  #observed = 0;
  /** End time (Unix seconds) up to which the sketch has been decayed. */
  #decayedAtS = 0;

  /**
   * @param halfLifeMs after this long an observation weighs half as much
   *   (0: never, the sketch covers every observation since start).
   */
  constructor(key: string, rule: TailRule, warmup: number, relativeAccuracy: number, maxBins: number, halfLifeMs = 0) {
    this.key = key;
    this.rule = rule;
    this.#warmup = warmup;
    this.#halfLifeS = halfLifeMs / 1000;
    // A budget-only rule needs no sketch: no memory, no work per span.
    this.#sketch = rule.quantile === undefined ? undefined : new LogSketch(relativeAccuracy, maxBins, rule.quantile);
  }

  get observed(): number {
    return this.#observed;
  }

  get sketch(): LogSketch | undefined {
    return this.#sketch;
  }

  /**
   * Classify `durationMs` against the threshold of the observations seen
   * BEFORE this one, then add it. Classifying first keeps a span from raising
   * the bar it is judged against (with few observations a single slow span
   * would otherwise be its own p99) and makes the decision reproducible from
   * the history alone.
   */
  observe(durationMs: number, endS = 0): TailVerdict | undefined {
    const rule = this.rule;
    const sketch = this.#sketch;
    let verdict: TailVerdict | undefined;
    if (sketch !== undefined) {
      if (this.#halfLifeS > 0 && endS - this.#decayedAtS >= 1) this.#decay(sketch, endS);
      if (this.#observed >= this.#warmup) {
        const threshold = sketch.trackedQuantile();
        if (durationMs > threshold) {
          verdict = { operation: this.key, quantile: rule.quantileLabel!, thresholdMs: threshold };
        }
      }
      sketch.add(durationMs);
    }
    this.#observed++;
    if (verdict === undefined && rule.budgetMs !== undefined && durationMs > rule.budgetMs) {
      verdict = { operation: this.key, quantile: 'budget', thresholdMs: rule.budgetMs };
    }
    return verdict;
  }

  /**
   * Weigh the past down by 2^(-elapsed / half-life), at most once per second
   * of span end time (seconds come free with the span's HrTime end). A
   * running quantile that forgets follows a service whose latency changes:
   * without it, a p99 learnt during a slow hour would hide the tail of the
   * fast hours after it.
   */
  #decay(sketch: LogSketch, endS: number): void {
    if (this.#decayedAtS > 0) sketch.scale(Math.pow(2, -(endS - this.#decayedAtS) / this.#halfLifeS));
    this.#decayedAtS = endS;
  }
}
