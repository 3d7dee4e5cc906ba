import type { SpanKind } from '@opentelemetry/api';
import { OVERFLOW_OPERATION, Operation, operationKey } from './operation.js';
import type { TailRule, TailSettings, TailVerdict } from './types.js';

/** Operations of one span name, by kind and by route. */
interface NameEntry {
  readonly byKind: (Operation | undefined)[];
  routes: Map<string, (Operation | undefined)[]> | undefined;
}

/**
 * Per-operation tail detection. The lookup is nested (name, then kind, then
 * route) so the hot path does not build a key string per span; the key is
 * built once, when an operation is created. At most `maxOperations`
 * operations exist; spans of any further operation share one overflow
 * operation, so 10^5 distinct span names cannot grow memory.
 */
export class TailDetector {
  readonly #settings: TailSettings;
  readonly #byName = new Map<string, NameEntry>();
  readonly #overflow: Operation;
  #operations = 0;
  #overflowed = 0;

  constructor(settings: TailSettings) {
    this.#settings = settings;
    this.#overflow = this.#create(OVERFLOW_OPERATION, settings.rule);
  }

  /**
   * Record one ended span; returns a verdict when it lands in the tail.
   * `endS` (Unix seconds of the span's end) drives the sketches' decay.
   */
  observe(name: string, kind: SpanKind, route: string | undefined, durationMs: number, endS = 0): TailVerdict | undefined {
    return this.operation(name, kind, route).observe(durationMs, endS);
  }

  /** The operation a span belongs to (created on first sight, or the overflow one). */
  operation(name: string, kind: SpanKind, route: string | undefined): Operation {
    let entry = this.#byName.get(name);
    let slots: (Operation | undefined)[];
    if (entry === undefined) {
      if (this.#operations >= this.#settings.maxOperations) return this.#overflowOp();
      entry = { byKind: [], routes: undefined };
      this.#byName.set(name, entry);
    }
    if (route === undefined || route === '') {
      slots = entry.byKind;
    } else {
      entry.routes ??= new Map();
      let r = entry.routes.get(route);
      if (r === undefined) {
        if (this.#operations >= this.#settings.maxOperations) return this.#overflowOp();
        r = [];
        entry.routes.set(route, r);
      }
      slots = r;
    }
    const op = slots[kind];
    if (op !== undefined) return op;
    if (this.#operations >= this.#settings.maxOperations) return this.#overflowOp();
    const key = operationKey(name, kind, route);
    const created = this.#create(key, this.#ruleFor(key, name));
    slots[kind] = created;
    this.#operations++;
    return created;
  }

  /** Operations tracked, the overflow one excluded. */
  get operationCount(): number {
    return this.#operations;
  }

  /** Spans that went to the overflow operation. */
  get overflowed(): number {
    return this.#overflowed;
  }

  /** Bytes held by sketch buckets, overflow operation included. */
  sketchBytes(): number {
    let total = this.#overflow.sketch?.byteLength ?? 0;
    const add = (slots: (Operation | undefined)[]): void => {
      for (const op of slots) total += op?.sketch?.byteLength ?? 0;
    };
    for (const entry of this.#byName.values()) {
      add(entry.byKind);
      if (entry.routes !== undefined) for (const r of entry.routes.values()) add(r);
    }
    return total;
  }

  #overflowOp(): Operation {
    this.#overflowed++;
    return this.#overflow;
  }

  #ruleFor(key: string, name: string): TailRule {
    const o = this.#settings.overrides;
    return o.get(key) ?? o.get(name) ?? this.#settings.rule;
  }

  #create(key: string, rule: TailRule): Operation {
    const s = this.#settings;
    return new Operation(key, rule, s.warmup, s.relativeAccuracy, s.maxBins, s.halfLifeMs);
  }
}
