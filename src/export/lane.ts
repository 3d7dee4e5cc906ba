import type { ExportOutcome } from './types.js';
import { failure } from './types.js';

/** Limits of one exporter's queue. An item bigger than `maxBytes` is refused. */
export interface LaneLimits {
  readonly maxItems: number;
  readonly maxBytes: number;
}

export type LaneHandler<T> = (item: T) => Promise<ExportOutcome>;

interface Entry<T> {
  readonly item: T;
  readonly bytes: number;
  readonly settle: (outcome: ExportOutcome) => void;
}

/**
 * A bounded FIFO with one worker: items are handled one at a time, in order.
 * When full, the oldest waiting item is dropped (its promise settles with a
 * failure) so the newest data wins and memory stays bounded. No promise chain
 * grows with the number of items: the worker is a loop over the queue.
 */
export class Lane<T> {
  readonly #limits: LaneLimits;
  readonly #handler: LaneHandler<T>;
  readonly #queue: Entry<T>[] = [];
  #bytes = 0;
  #running = false;
  #closed = false;
  #idleWaiters: (() => void)[] = [];
  #dropped = 0;
  #droppedBytes = 0;
  #highWaterBytes = 0;

  constructor(limits: LaneLimits, handler: LaneHandler<T>) {
    this.#limits = limits;
    this.#handler = handler;
  }

  /** Queue `item` (weighing `bytes`); settles once it was handled or dropped. */
  enqueue(item: T, bytes: number): Promise<ExportOutcome> {
    if (this.#closed) return Promise.resolve(failure('exporter is shut down'));
    if (bytes > this.#limits.maxBytes) {
      this.#dropped++;
      this.#droppedBytes += bytes;
      return Promise.resolve(failure(`dropped: item of ${bytes} bytes exceeds the queue limit of ${this.#limits.maxBytes} bytes`));
    }
    let settle!: (o: ExportOutcome) => void;
    const done = new Promise<ExportOutcome>((resolve) => {
      settle = resolve;
    });
    // Make room first, so the queue never holds more than its limits.
    while (
      this.#queue.length > 0 &&
      (this.#queue.length + 1 > this.#limits.maxItems || this.#bytes + bytes > this.#limits.maxBytes)
    ) {
      this.#dropOldest();
    }
    this.#queue.push({ item, bytes, settle });
    this.#bytes += bytes;
    if (this.#bytes > this.#highWaterBytes) this.#highWaterBytes = this.#bytes;
    this.#kick();
    return done;
  }

  /** Resolves when the queue is empty and nothing is being handled. */
  idle(): Promise<void> {
    if (!this.#running && this.#queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Stop accepting; settle everything still waiting with `reason`. */
  close(reason: string): void {
    this.#closed = true;
    while (this.#queue.length > 0) this.#dropOldest(reason);
  }

  get length(): number {
    return this.#queue.length;
  }

  get bytes(): number {
    return this.#bytes;
  }

  stats(): { queued: number; queuedBytes: number; highWaterBytes: number; dropped: number; droppedBytes: number } {
    return {
      queued: this.#queue.length,
      queuedBytes: this.#bytes,
      highWaterBytes: this.#highWaterBytes,
      dropped: this.#dropped,
      droppedBytes: this.#droppedBytes,
    };
  }

  #dropOldest(reason = 'dropped: queue full'): void {
    const e = this.#queue.shift();
    if (e === undefined) return;
    this.#bytes -= e.bytes;
    this.#dropped++;
    this.#droppedBytes += e.bytes;
    e.settle(failure(reason));
  }

  #kick(): void {
    if (this.#running) return;
    this.#running = true;
    void this.#work();
  }

  async #work(): Promise<void> {
    try {
      for (;;) {
        const e = this.#queue.shift();
        if (e === undefined) break;
        this.#bytes -= e.bytes;
        let outcome: ExportOutcome;
        try {
          outcome = await this.#handler(e.item);
        } catch (err) {
          outcome = failure(err instanceof Error ? err.message : String(err));
        }
        e.settle(outcome);
      }
    } finally {
      this.#running = false;
      const waiters = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const w of waiters) w();
    }
  }
}
