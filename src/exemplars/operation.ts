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
  #observed = 0;

  constructor(key: string, rule: TailRule, warmup: number, relativeAccuracy: number, maxBins: number) {
    this.key = key;
    this.rule = rule;
    this.#warmup = warmup;
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
  observe(durationMs: number): TailVerdict | undefined {
    this.#observed++;
    const rule = this.rule;
    const sketch = this.#sketch;
    let verdict: TailVerdict | undefined;
    if (sketch !== undefined) {
      if (sketch.count >= this.#warmup) {
        const threshold = sketch.trackedQuantile();
        if (durationMs > threshold) {
          verdict = { operation: this.key, quantile: rule.quantileLabel!, thresholdMs: threshold };
        }
      }
      sketch.add(durationMs);
    }
    if (verdict === undefined && rule.budgetMs !== undefined && durationMs > rule.budgetMs) {
      verdict = { operation: this.key, quantile: 'budget', thresholdMs: rule.budgetMs };
    }
    return verdict;
  }
}
