import { context } from '@opentelemetry/api';
import { suppressTracing } from '../tracing/sdk.js';
import type { Transport, TransportRequest, TransportResult } from './transport.js';
import type * as Http from 'node:http';
import { http, https } from '../core/builtins.js';

export interface HttpTransportOptions {
  /** Full URL requests go to (a per-request query string is appended). */
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  /** Largest response body kept (bytes); the rest is read and dropped. */
  readonly maxResponseBytes?: number;
}

const RETRYABLE_STATUS = new Set([429, 502, 503, 504]);

/**
 * POST over node:http/https with a keep-alive agent. Outgoing requests run
 * with tracing suppressed so an instrumented http module does not trace the
 * profiler's own exports.
 */
export class HttpTransport implements Transport {
  readonly #url: URL;
  readonly #headers: Readonly<Record<string, string>>;
  readonly #agent: Http.Agent;
  readonly #maxResponse: number;
  /** node:https, loaded only for an https URL (it brings tls and crypto: ~5 MB RSS on Node 24). */
  readonly #https: typeof import('node:https') | undefined;

  constructor(options: HttpTransportOptions) {
    this.#url = options.url;
    this.#headers = options.headers;
    this.#https = options.url.protocol === 'https:' ? https() : undefined;
    this.#agent = new (this.#https ?? http).Agent({ keepAlive: true, maxSockets: 2 });
    this.#maxResponse = options.maxResponseBytes ?? 64 * 1024;
  }

  send(request: TransportRequest, timeoutMs: number, signal?: AbortSignal): Promise<TransportResult> {
    return context.with(suppressTracing(context.active()), () => this.#send(request, timeoutMs, signal));
  }

  close(): void {
    this.#agent.destroy();
  }

  #send(request: TransportRequest, timeoutMs: number, signal?: AbortSignal): Promise<TransportResult> {
    return new Promise<TransportResult>((resolve) => {
      let settled = false;
      const done = (r: TransportResult): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve(r);
      };
      if (signal?.aborted === true) {
        done({ kind: 'failure', reason: 'aborted' });
        return;
      }
      const url = new URL(this.#url.href);
      if (request.query !== undefined && request.query !== '') {
        url.search = url.search === '' ? `?${request.query}` : `${url.search}&${request.query}`;
      }
      const headers: Record<string, string> = {
        ...this.#headers,
        ...request.headers,
        'content-length': String(request.body.byteLength),
      };
      let req: Http.ClientRequest;
      try {
        req = (this.#https ?? http).request(url, { method: 'POST', headers, agent: this.#agent });
      } catch (err) {
        done({ kind: 'failure', reason: err instanceof Error ? err.message : String(err) });
        return;
      }
      // An export in flight must not keep a finished app alive: its socket is
      // unref'd (shutdown holds the loop open for its own deadline instead).
      req.on('socket', (socket) => socket.unref());
      const timer = setTimeout(() => {
        req.destroy(new Error(`timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
      const onAbort = (): void => {
        req.destroy(new Error('aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });

      req.on('error', (err) => {
        // Connection refused/reset, DNS, timeouts: all worth another try,
        // except an abort (shutdown) which ends the attempt.
        if (signal?.aborted === true) done({ kind: 'failure', reason: 'aborted' });
        else done({ kind: 'retryable', reason: err.message });
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        res.on('data', (c: Buffer) => {
          if (kept < this.#maxResponse) {
            const part = c.subarray(0, this.#maxResponse - kept);
            chunks.push(part);
            kept += part.length;
          }
        });
        res.on('error', (err) => done({ kind: 'retryable', reason: err.message }));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          const body = Buffer.concat(chunks);
          if (status >= 200 && status < 300) {
            done({ kind: 'success', status, body });
          } else if (RETRYABLE_STATUS.has(status)) {
            const retryAfterMs = parseRetryAfter(res.headers['retry-after']);
            done({
              kind: 'retryable',
              reason: `HTTP ${status}`,
              status,
              body,
              ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
            });
          } else {
            done({ kind: 'failure', reason: `HTTP ${status}${describeBody(body)}`, status, body });
          }
        });
      });
      req.end(request.body);
    });
  }
}

/** `Retry-After`: delay in seconds or an HTTP date; undefined when absent or unusable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

function describeBody(body: Buffer): string {
  if (body.length === 0) return '';
  // Text bodies help the user; binary (protobuf) bodies are decoded by the caller.
  const text = body.subarray(0, 200).toString('utf8');
  return /^[\x20-\x7e\s]*$/.test(text) ? `: ${text.trim()}` : '';
}
