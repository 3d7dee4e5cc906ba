import type { Diagnostics } from '../core/diagnostics.js';
import { describe } from '../core/diagnostics.js';
import type { WindowProfile } from '../core/window.js';
import { withinDeadline } from './deadline.js';
import type { LaneLimits } from './lane.js';
import { Lane } from './lane.js';
import type { RetryPolicy } from './retrying-transport.js';
import { RetryingTransport } from './retrying-transport.js';
import type { Transport, TransportRequest, TransportResult } from './transport.js';
import type { ExportOutcome, ProfileExporter } from './types.js';
import { failure, SUCCESS } from './types.js';

export interface QueuedExporterOptions {
  readonly name: string;
  /** The bare transport; the exporter wraps it with retries. */
  readonly transport: Transport;
  readonly retry: RetryPolicy;
  /** Per-attempt timeout. */
  readonly timeoutMs: number;
  readonly queue: LaneLimits;
  /** One window -> the requests that deliver it (scrubbed window in, bytes out). */
  readonly encode: (window: WindowProfile) => Promise<TransportRequest[]>;
  /**
   * Look at a final result (after retries). May report server-side
   * rejections; returns the outcome to record.
   */
  readonly inspect?: (result: TransportResult, count: (name: string, n?: number) => void) => ExportOutcome;
  readonly diagnostics: Diagnostics;
}

/**
 * A network exporter: encode each window, hold the bytes in a bounded queue
 * (items and bytes; the oldest is dropped and counted), send them one at a
 * time in order through a retrying transport. Shutdown delivers what it can
 * before its deadline, then aborts the attempt in flight and drops the rest.
 */
export class QueuedExporter implements ProfileExporter {
  readonly name: string;
  readonly #o: QueuedExporterOptions;
  readonly #transport: RetryingTransport;
  readonly #lane: Lane<TransportRequest>;
  readonly #abort = new AbortController();
  readonly #counters = new Map<string, number>();
  readonly #encoded = new Map<number, { requests: TransportRequest[]; resolve: (o: ExportOutcome[]) => void }>();
  #seqNext = 0;
  #seqQueued = 0;
  #shutdown: Promise<void> | undefined;

  constructor(options: QueuedExporterOptions) {
    this.name = options.name;
    this.#o = options;
    this.#transport = new RetryingTransport(options.transport, options.retry, (r, waitMs) => {
      this.#count('retries');
      this.#o.diagnostics.count(`export.${this.name}.retries`);
      this.#o.diagnostics.warnOnce(
        `export.${this.name}.retry`,
        `spanfuse: exporter ${this.name}: ${r.kind === 'retryable' ? r.reason : 'error'}; retrying in ${Math.round(waitMs)} ms (further retries are counted, not logged)`,
      );
    });
    this.#lane = new Lane(options.queue, (req) => this.#deliver(req));
  }

  async export(window: WindowProfile): Promise<ExportOutcome> {
    if (this.#shutdown !== undefined) return failure('exporter is shut down');
    // Encodings finish out of order (sliced encoder, gzip on the thread
    // pool); the sequence number puts windows into the queue in call order.
    const seq = this.#seqNext++;
    let requests: TransportRequest[] | undefined;
    let encodeError: unknown;
    try {
      requests = await this.#o.encode(window);
    } catch (err) {
      encodeError = err;
    }
    const queued = new Promise<ExportOutcome[]>((resolve) => {
      this.#encoded.set(seq, { requests: requests ?? [], resolve });
      this.#enqueueInOrder();
    });
    if (requests === undefined) {
      await queued;
      this.#count('encodeErrors');
      this.#o.diagnostics.error(`export.${this.name}.encode`, encodeError);
      return failure(`encoding failed: ${describe(encodeError)}`);
    }
    const outcomes = await queued;
    for (const o of outcomes) {
      if (o.kind !== 'success' && o.reason.startsWith('dropped')) {
        this.#count('dropped');
        this.#o.diagnostics.count(`export.${this.name}.dropped`);
      }
    }
    return outcomes.find((o) => o.kind !== 'success') ?? SUCCESS;
  }

  #enqueueInOrder(): void {
    for (;;) {
      const e = this.#encoded.get(this.#seqQueued);
      if (e === undefined) return;
      this.#encoded.delete(this.#seqQueued);
      this.#seqQueued++;
      void Promise.all(e.requests.map((r) => this.#lane.enqueue(r, r.body.byteLength))).then(e.resolve);
    }
  }

  shutdown(deadlineMs: number): Promise<void> {
    this.#shutdown ??= this.#doShutdown(deadlineMs);
    return this.#shutdown;
  }

  stats(): Readonly<Record<string, number>> {
    const lane = this.#lane.stats();
    return {
      ...Object.fromEntries(this.#counters),
      queued: lane.queued,
      queuedBytes: lane.queuedBytes,
      queueHighWaterBytes: lane.highWaterBytes,
      queueLimitBytes: this.#o.queue.maxBytes,
    };
  }

  async #doShutdown(deadlineMs: number): Promise<void> {
    await withinDeadline(this.#lane.idle(), deadlineMs);
    // Whatever is still waiting or in flight now is given up on.
    this.#abort.abort();
    // Their export() promises settle as dropped and are counted there.
    this.#lane.close('dropped: exporter shut down before delivery');
    this.#transport.close();
  }

  async #deliver(req: TransportRequest): Promise<ExportOutcome> {
    const result = await this.#transport.send(req, this.#o.timeoutMs, this.#abort.signal);
    const outcome = this.#o.inspect ? this.#o.inspect(result, (n, k) => this.#count(n, k)) : plain(result);
    if (outcome.kind === 'success') {
      this.#count('sent');
      this.#count('sentBytes', req.body.byteLength);
    } else {
      this.#count('failed');
      this.#o.diagnostics.error(`export.${this.name}`, outcome.reason);
    }
    return outcome;
  }

  #count(name: string, n = 1): void {
    this.#counters.set(name, (this.#counters.get(name) ?? 0) + n);
  }
}

function plain(r: TransportResult): ExportOutcome {
  if (r.kind === 'success') return SUCCESS;
  if (r.kind === 'retryable') return failure(`gave up after retries: ${r.reason}`);
  return failure(r.reason);
}
