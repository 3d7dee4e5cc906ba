import type { WindowProfile } from '../core/window.js';

/** Outcome of one export attempt, as a transport or exporter reports it. */
export type ExportOutcome =
  | { readonly kind: 'success' }
  | { readonly kind: 'retryable'; readonly reason: string; readonly retryAfterMs?: number }
  | { readonly kind: 'failure'; readonly reason: string };

/**
 * Receives finished (already scrubbed) windows. Implementations never throw:
 * failures come back as an outcome and are counted by the caller.
 */
export interface ProfileExporter {
  readonly name: string;
  export(window: WindowProfile): Promise<ExportOutcome>;
  /** Deliver what is queued, within `deadlineMs`, then release resources. Idempotent. */
  shutdown(deadlineMs: number): Promise<void>;
}
