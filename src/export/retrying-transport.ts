import type { Transport, TransportRequest, TransportResult } from './transport.js';

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  readonly maxAttempts: number;
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;
  readonly multiplier: number;
  /** Give up on an item once this much time went by since its first attempt. */
  readonly maxElapsedMs: number;
  /** A server's Retry-After is honoured up to this long. */
  readonly maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = Object.freeze({
  maxAttempts: 12,
  initialBackoffMs: 1000,
  maxBackoffMs: 30_000,
  multiplier: 2,
  maxElapsedMs: 5 * 60_000,
  maxRetryAfterMs: 120_000,
});

/**
 * Retries the inner transport on retryable outcomes (network errors, 429,
 * 502, 503, 504) with exponential backoff and jitter, waiting what the
 * server's Retry-After asks for instead when it says. Sleeps are unref'd
 * timers and end early when `signal` aborts (shutdown).
 */
export class RetryingTransport implements Transport {
  readonly #inner: Transport;
  readonly #policy: RetryPolicy;
  readonly #onRetry: (result: TransportResult, waitMs: number) => void;
  readonly #random: () => number;

  constructor(
    inner: Transport,
    policy: RetryPolicy,
    onRetry: (result: TransportResult, waitMs: number) => void = () => undefined,
    random: () => number = Math.random,
  ) {
    this.#inner = inner;
    this.#policy = policy;
    this.#onRetry = onRetry;
    this.#random = random;
  }

  async send(request: TransportRequest, timeoutMs: number, signal?: AbortSignal): Promise<TransportResult> {
    const p = this.#policy;
    const started = Date.now();
    let backoff = p.initialBackoffMs;
    for (let attempt = 1; ; attempt++) {
      const result = await this.#inner.send(request, timeoutMs, signal);
      if (result.kind !== 'retryable') return result;
      if (attempt >= p.maxAttempts || isAborted(signal)) return result;
      // Equal jitter: half fixed, half random, so retries of many clients spread out.
      const jittered = backoff / 2 + (this.#random() * backoff) / 2;
      const wait = Math.min(result.retryAfterMs ?? jittered, p.maxRetryAfterMs);
      if (Date.now() - started + wait > p.maxElapsedMs) return result;
      this.#onRetry(result, wait);
      await sleep(wait, signal);
      if (isAborted(signal)) return result;
      backoff = Math.min(backoff * p.multiplier, p.maxBackoffMs);
    }
  }

  close(): void {
    this.#inner.close();
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (isAborted(signal)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    t.unref();
    signal?.addEventListener('abort', done, { once: true });
  });
}

function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}
