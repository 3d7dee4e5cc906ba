import type { ExportOutcome } from './types.js';

/** One request body plus what varies per request (Pyroscope's from/until). */
export interface TransportRequest {
  readonly body: Uint8Array;
  /** Query string to append, without the leading `?`. */
  readonly query?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Outcome of one attempt, with the response when there was one. */
export type TransportResult = ExportOutcome & {
  readonly status?: number;
  /** Response body, cut at a small limit. */
  readonly body?: Buffer;
};

/**
 * Sends bytes somewhere once. Never throws: network errors and retryable
 * statuses come back as `retryable`. Retrying is a wrapper, not a branch in
 * here (see RetryingTransport).
 */
export interface Transport {
  send(request: TransportRequest, timeoutMs: number, signal?: AbortSignal): Promise<TransportResult>;
  /** Release sockets. */
  close(): void;
}
