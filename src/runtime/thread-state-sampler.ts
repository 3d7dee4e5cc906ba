import { Worker } from 'node:worker_threads';
import type { Diagnostics } from '../core/diagnostics.js';
import type { Arch } from './platform.js';
import { StateReader } from './state-reader.js';
import { H_ERRORS, H_STOP, H_TICKS, H_WORKER_TID, createStateViews } from './state-table.js';
import { futexSyscalls } from './syscalls.js';

export interface ThreadStateSamplerOptions {
  readonly hz: number;
  readonly arch: Arch | undefined;
  readonly diagnostics: Diagnostics;
  readonly procSelf?: string;
  /** 'app' (default): main, workers, threadpool; 'all': every thread. */
  readonly threads?: 'app' | 'all';
}

export interface ThreadStateStats {
  readonly running: boolean;
  readonly hz: number;
  readonly passes: number;
  readonly procReadErrors: number;
  readonly samplerTid: number;
}

/**
 * Runs the thread-state sampling loop in a worker thread (so it never delays
 * the event loop) and exposes its results through a {@link StateReader}.
 */
export class ThreadStateSampler {
  readonly #o: ThreadStateSamplerOptions;
  #worker: Worker | undefined;
  #reader: StateReader | undefined;
  #ready: Promise<boolean> | undefined;

  constructor(options: ThreadStateSamplerOptions) {
    this.#o = options;
  }

  get reader(): StateReader | undefined {
    return this.#reader;
  }

  /** Starts the worker; resolves true once it samples. Never throws. */
  start(): Promise<boolean> {
    if (this.#ready) return this.#ready;
    const intervalMs = Math.max(1, Math.round(1000 / this.#o.hz));
    const views = createStateViews(intervalMs * 1000);
    this.#reader = new StateReader(views);
    this.#ready = new Promise<boolean>((resolve) => {
      try {
        const worker = new Worker(new URL('./thread-state-worker.js', import.meta.url), {
          workerData: {
            sab: views.sab,
            intervalMs,
            pid: process.pid,
            procSelf: this.#o.procSelf ?? '/proc/self',
            futexNrs: futexSyscalls(this.#o.arch),
            threads: this.#o.threads ?? 'app',
            spanfuseInternal: true,
          },
          // Not the app's preload flags: `--import spanfuse/register` here
          // would start a whole profiler inside this tiny worker.
          execArgv: [],
          // A tiny heap: the loop allocates almost nothing.
          resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 1 },
          stdout: false,
          stderr: false,
        });
        worker.unref();
        worker.once('message', () => resolve(true));
        worker.once('error', (err) => {
          this.#o.diagnostics.error('runtime.thread_state_sampler', err);
          resolve(false);
        });
        worker.once('exit', () => {
          this.#worker = undefined;
          resolve(false);
        });
        this.#worker = worker;
      } catch (err) {
        this.#o.diagnostics.error('runtime.thread_state_sampler', err);
        resolve(false);
      }
    });
    return this.#ready;
  }

  stats(): ThreadStateStats {
    const h = this.#reader?.views.header;
    return {
      running: this.#worker !== undefined,
      hz: this.#o.hz,
      passes: h ? Atomics.load(h, H_TICKS) : 0,
      procReadErrors: h ? Atomics.load(h, H_ERRORS) : 0,
      samplerTid: h ? Atomics.load(h, H_WORKER_TID) : 0,
    };
  }

  /** Stops the worker. Idempotent; the shared table stays readable. */
  async stop(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    if (!worker) return;
    try {
      const h = this.#reader?.views.header;
      if (h) {
        Atomics.store(h, H_STOP, 1);
        Atomics.notify(h, H_STOP);
      }
      await worker.terminate();
    } catch (err) {
      this.#o.diagnostics.error('runtime.thread_state_sampler', err);
    }
  }
}
