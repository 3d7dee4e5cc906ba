import type { WindowProfile } from '../core/window.js';

/** Outcome of one export attempt, as a transport or exporter reports it. */
export type ExportOutcome =
  | { readonly kind: 'success' }
  | { readonly kind: 'retryable'; readonly reason: string; readonly retryAfterMs?: number }
  | { readonly kind: 'failure'; readonly reason: string };

/**
 * Receives finished (already scrubbed) windows. Implementations never throw:
 * failures come back as an outcome and are counted by the caller.
 *
 * The promise of `export()` settles when the window was delivered, dropped
 * from the exporter's bounded queue, or given up on; callers must not wait for
 * it before handing over the next window.
 */
export interface ProfileExporter {
  readonly name: string;
  export(window: WindowProfile): Promise<ExportOutcome>;
  /** Deliver what is queued, within `deadlineMs`, then release resources. Idempotent. */
  shutdown(deadlineMs: number): Promise<void>;
  /**
   * Deliver a window synchronously (process exit); only exporters that can
   * (files) implement it. Never throws; false when it failed.
   */
  writeSync?(window: WindowProfile): boolean;
  /**
   * Deliver synchronously what `export()` accepted but has not delivered yet
   * (queued, being encoded), for process exit; only exporters that can
   * (files) implement it. Never throws.
   */
  drainSync?(): void;
  /** Keep a window's stored data until `unpin` (files: out of retention). */
  pin?(profileId: string): void;
  unpin?(profileId: string): void;
  /** Exporter-specific counters (queued bytes, drops, retries ...). */
  stats?(): Readonly<Record<string, number>>;
}

/**
 * The policy stage every window goes through once before any exporter sees
 * it. Returns a scrubbed copy; the input window is left untouched.
 */
export interface WindowScrubber {
  scrub(window: WindowProfile): WindowProfile;
  /** Preferred when present: the same result without a long event-loop block. */
  scrubAsync?(window: WindowProfile): Promise<WindowProfile>;
  stats?(): Readonly<Record<string, number>>;
}

export const SUCCESS: ExportOutcome = Object.freeze({ kind: 'success' });

export function failure(reason: string): ExportOutcome {
  return { kind: 'failure', reason };
}
