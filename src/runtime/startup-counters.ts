import type { SpanCounterSource } from '../core/counters.js';

/** Marks a token taken by the start-up source. */
class StartupToken {
  constructor(readonly inner: unknown) {}
}

/**
 * Span counters from the process's first line: until the thread-state
 * sampler has made its first pass (its thread takes tens of ms to start, more
 * on a loaded machine, and the preload must not wait for it), spans read the
 * thread's own counters (getrusage through koffi, else /proc) at start and
 * end. Once `samplerReady()`, every new span uses `steady` and the check
 * stops; spans begun before keep their start-up token to the end.
 */
export class StartupSpanCounters implements SpanCounterSource {
  readonly #steady: SpanCounterSource;
  readonly #startup: SpanCounterSource;
  readonly #samplerReady: () => boolean;
  #starting = true;

  constructor(steady: SpanCounterSource, startup: SpanCounterSource, samplerReady: () => boolean) {
    this.#steady = steady;
    this.#startup = startup;
    this.#samplerReady = samplerReady;
  }

  begin(): unknown {
    if (this.#starting) {
      if (!this.#samplerReady()) return new StartupToken(this.#startup.begin());
      this.#starting = false;
    }
    return this.#steady.begin();
  }

  end(token: unknown): Readonly<Record<string, number>> {
    return token instanceof StartupToken ? this.#startup.end(token.inner) : this.#steady.end(token);
  }
}
