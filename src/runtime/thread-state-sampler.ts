import { Worker } from 'node:worker_threads';
import { RUNTIME_DEFAULTS } from '../config/runtime.js';
import type { Diagnostics } from '../core/diagnostics.js';
import { addSelfTime } from '../core/self-time.js';
import type { Arch } from './platform.js';
import { StateReader } from './state-reader.js';
import { H_ERRORS, H_STOP, H_TICKS, H_WORKER_TID, createStateViews } from './state-table.js';
import type { StateViews } from './state-table.js';
import { futexSyscalls } from './syscalls.js';
import { currentTid } from './thread-id.js';
import { ThreadStateLoop, passesPerSecond } from './thread-state-loop.js';

export interface ThreadStateSamplerOptions {
  readonly hz: number;
  readonly arch: Arch | undefined;
  readonly diagnostics: Diagnostics;
  readonly procSelf?: string;
  /** 'app' (default): main, workers, threadpool; 'all': every thread. */
  readonly threads?: 'app' | 'all';
  /**
   * Where the passes run: 'worker' (default), a thread of their own; 'main',
   * on the calling thread's event loop (no isolate, but that thread's own
   * wait reasons are not observable).
   */
  readonly host?: 'worker' | 'main';
  /**
   * `host: 'main'`: this thread's switches and faults without /proc (see
   * LoopOptions.hostCounters).
   */
  readonly hostCounters?: ((out: Float64Array) => boolean) | undefined;
  /**
   * Visit idle threadpool threads only every this many passes (see
   * LoopOptions.idleEvery); default `runtime.threadStateIdleEvery`'s, 1
   * visits every thread at every pass.
   */
  readonly idleEvery?: number;
}

export interface ThreadStateStats {
  readonly running: boolean;
  readonly hz: number;
  readonly passes: number;
  readonly procReadErrors: number;
  readonly samplerTid: number;
  readonly host: 'worker' | 'main';
}

/**
 * Runs the thread-state sampling loop and exposes its results through a
 * {@link StateReader}. In a worker thread by default, so passes go on while
 * the event loop is blocked and every thread's wait reason is seen; or, with
 * `host: 'main'`, on this thread's event loop: no second isolate (on Node 24
 * an idle worker alone is ~17 MB of RSS, on Node 20 ~9 MB), passes on a
 * timer and, when one is overdue, at the next span boundary or read (see
 * {@link StateReader.setFreshen}).
 */
export class ThreadStateSampler {
  readonly #o: ThreadStateSamplerOptions;
  #worker: Worker | undefined;
  #timer: NodeJS.Timeout | undefined;
  #loop: ThreadStateLoop | undefined;
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
    if (this.#o.host === 'main') {
      this.#ready = Promise.resolve(this.#startHere(views, intervalMs));
      return this.#ready;
    }
    this.#ready = new Promise<boolean>((resolve) => {
      try {
        const worker = new Worker(new URL('./thread-state-worker.js', import.meta.url), {
          workerData: {
            sab: views.sab,
            intervalMs,
            pid: process.pid,
            procSelf: this.#o.procSelf ?? '/proc/self',
            futexNrs: futexSyscalls(this.#o.arch),
            idleEvery: this.#o.idleEvery ?? RUNTIME_DEFAULTS.threadStateIdleEvery,
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

  /** `host: 'main'`: passes on this thread, on a timer and when a read finds one overdue. */
  #startHere(views: StateViews, intervalMs: number): boolean {
    const tid = currentTid();
    if (tid <= 0) return false;
    const loop = new ThreadStateLoop(views, {
      procSelf: this.#o.procSelf ?? '/proc/self',
      pid: process.pid,
      selfTid: -1,
      hostTid: tid,
      hostCounters: this.#o.hostCounters,
      futexNrs: futexSyscalls(this.#o.arch),
      refreshEvery: passesPerSecond(intervalMs),
      wchanEvery: passesPerSecond(intervalMs),
      idleEvery: this.#o.idleEvery ?? RUNTIME_DEFAULTS.threadStateIdleEvery,
      threads: this.#o.threads ?? 'app',
    });
    let last = performance.now();
    const pass = (): void => {
      last = performance.now();
      loop.countedPass();
      addSelfTime('passes', performance.now() - last);
    };
    pass();
    this.#loop = loop;
    this.#timer = setInterval(pass, intervalMs);
    this.#timer.unref();
    // A busy loop fires the timer late: a span boundary or a window read
    // runs the overdue pass instead, so a span that blocked the thread past
    // a pass still gets one at its end; the timer restarts from it rather
    // than firing a second pass right after.
    this.#reader?.setFreshen(() => {
      if (performance.now() - last < intervalMs) return;
      pass();
      this.#timer?.refresh();
    });
    return true;
  }

  stats(): ThreadStateStats {
    const h = this.#reader?.views.header;
    return {
      running: this.#worker !== undefined || this.#timer !== undefined,
      hz: this.#o.hz,
      passes: h ? Atomics.load(h, H_TICKS) : 0,
      procReadErrors: h ? Atomics.load(h, H_ERRORS) : 0,
      samplerTid: h ? Atomics.load(h, H_WORKER_TID) : 0,
      host: this.#o.host ?? 'worker',
    };
  }

  /** Stops the sampler. Idempotent; the shared table stays readable. */
  async stop(): Promise<void> {
    if (this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      this.#reader?.setFreshen(undefined);
      this.#loop?.close();
      this.#loop = undefined;
    }
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
