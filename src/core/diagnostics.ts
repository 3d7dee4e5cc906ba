/**
 * Failure accounting for code that runs inside the host process. Nothing here
 * throws: a failure is counted, reported once per kind, and exposed through
 * `stats()`.
 */
export type WarnSink = (message: string) => void;

const defaultSink: WarnSink = (message) => {
  process.emitWarning(message, { code: 'SPANFUSE' });
};

export class Diagnostics {
  readonly #counters = new Map<string, number>();
  readonly #reported = new Set<string>();
  readonly #sink: WarnSink;

  constructor(sink: WarnSink = defaultSink) {
    this.#sink = sink;
  }

  /** Add `n` to a named counter (drops, redactions, retries ...). */
  count(name: string, n = 1): void {
    this.#counters.set(name, (this.#counters.get(name) ?? 0) + n);
  }

  /**
   * Record a failure of kind `kind`: counted every time, reported to the sink
   * only the first time, so a failing exporter cannot flood the host's logs.
   */
  error(kind: string, err: unknown): void {
    this.count(`errors.${kind}`);
    this.warnOnce(kind, `spanfuse: ${kind} failed: ${describe(err)}`);
  }

  /** Report `message` once per `key` for the life of this instance. */
  warnOnce(key: string, message: string): void {
    if (this.#reported.has(key)) return;
    this.#reported.add(key);
    try {
      this.#sink(message);
    } catch {
      // A broken sink must not break the caller.
    }
  }

  counters(): Record<string, number> {
    return Object.fromEntries(this.#counters);
  }
}

export function describe(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
