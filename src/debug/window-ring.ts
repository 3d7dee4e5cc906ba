import type { WindowProfile } from '../core/window.js';
import type { ExportOutcome, ProfileExporter } from '../export/index.js';

/**
 * The debug endpoint's view of recent windows: an exporter like the others,
 * so it only ever sees windows after the scrub stage, and keeps the newest
 * ones in memory (bounded in count and age) for /debug/pprof/profile, the
 * tail span page and flamegraphs.
 */
export class WindowRing implements ProfileExporter {
  readonly name = 'debug';
  readonly #maxWindows: number;
  readonly #maxAgeNs: bigint;
  #windows: WindowProfile[] = [];
  #waiters = new Set<() => void>();

  constructor(opts: { maxWindows?: number; maxAgeMs?: number } = {}) {
    this.#maxWindows = Math.max(1, opts.maxWindows ?? 120);
    this.#maxAgeNs = BigInt(Math.max(1000, opts.maxAgeMs ?? 10 * 60_000)) * 1_000_000n;
  }

  export(window: WindowProfile): Promise<ExportOutcome> {
    this.#windows.push(window);
    const oldest = window.endUnixNs - this.#maxAgeNs;
    while (this.#windows.length > this.#maxWindows || (this.#windows[0] !== undefined && this.#windows[0].endUnixNs < oldest)) this.#windows.shift();
    for (const w of [...this.#waiters]) w();
    return Promise.resolve({ kind: 'success' });
  }

  /** Retained windows, oldest first. */
  windows(): readonly WindowProfile[] {
    return this.#windows;
  }

  /** Resolves true once a window ending at or after `endNs` arrived, false after `timeoutMs`. */
  waitForEnd(endNs: bigint, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    const reached = (): boolean => this.#windows.some((w) => w.endUnixNs >= endNs);
    if (reached()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean): void => {
        clearTimeout(timer);
        this.#waiters.delete(check);
        signal?.removeEventListener('abort', abort);
        resolve(ok);
      };
      const check = (): void => {
        if (reached()) done(true);
      };
      const abort = (): void => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      timer.unref();
      this.#waiters.add(check);
      signal?.addEventListener('abort', abort, { once: true });
    });
  }

  shutdown(): Promise<void> {
    this.#windows = [];
    return Promise.resolve();
  }
}
