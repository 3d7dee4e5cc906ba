import { isMainThread } from 'node:worker_threads';
import type { WindowProfile } from '../core/window.js';
import { installFlushTarget } from './flush-target.js';
import { addFlushSample, captureFlushMoment, threadCpuNs } from './flush-tail.js';
import type { FlushMoment } from './flush-tail.js';
import { WorkerFlusher } from './flusher.js';
import type { FlushStats } from './flusher.js';
import { ensureRegistry, markUnprofiled } from './registry.js';
import type { FlushAnswer } from './registry.js';
import { hookTerminate } from './terminate-hook.js';


export interface WorkerSupport {
  /** Main thread: flush-before-terminate figures; undefined in workers. */
  stats(): FlushStats | undefined;
  /** A window opened (worker: remember the thread's CPU time). */
  windowOpened(): void;
  /** A window closed; in a worker answering a flush, add the flush sample to it. */
  windowClosed(w: WindowProfile): void;
  /**
   * Main thread, process exiting: ask profiled workers to write their open
   * windows (Node terminates them right after the `exit` listeners) and
   * return the blocking wait for their answers (bounded by the
   * `flushTimeoutMs` given at start); it returns how many wrote one. Workers: a
   * wait that returns 0 at once.
   */
  exiting(): () => number;
  /**
   * Worker: everything this thread had to write is written (its exit, or
   * shutdown): a flush request from now on is settled at once (see
   * `markUnprofiled`). Main thread: nothing.
   */
  ended(): void;
  /** Idempotent. */
  stop(): void;
}

/**
 * What a running profiler does about worker threads, in the thread it runs in:
 * - main thread: publish the shared registry, attach to workers through the
 *   inspector and make `terminate()` ask profiled workers to flush first;
 * - worker: answer flush requests with `flushSync` (write the open window:
 *   'wrote'; 'empty' when there is nothing to write; 'busy' when the request
 *   interrupted spanfuse's own window work), on the worker's next loop turn
 *   or, when asked so, at once; and mark workers this worker terminates, for
 *   their own silence.
 */
export function startWorkerSupport(flushSync: () => FlushAnswer, flushTimeoutMs: number): WorkerSupport {
  if (isMainThread) {
    ensureRegistry();
    const flusher = flushTimeoutMs > 0 ? WorkerFlusher.start() : undefined;
    const unhook = hookTerminate({ ...(flusher ? { flusher } : {}), flushTimeoutMs });
    return {
      stats: () => flusher?.stats(),
      exiting: () => flusher?.flushAllForExit(flushTimeoutMs) ?? (() => 0),
      ended: () => undefined,
      windowOpened: () => undefined,
      windowClosed: () => undefined,
      stop: () => {
        unhook();
        flusher?.close();
      },
    };
  }
  let cpuAtOpen = threadCpuNs();
  let moment: FlushMoment | undefined;
  const uninstall = installFlushTarget<FlushMoment>((captured) => {
    moment = captured;
    try {
      return flushSync();
    } finally {
      moment = undefined;
    }
  }, captureFlushMoment);
  const unhook = hookTerminate({ flushTimeoutMs: 0 });
  return {
    stats: () => undefined,
    exiting: () => () => 0,
    ended: markUnprofiled,
    windowOpened: () => {
      cpuAtOpen = threadCpuNs();
    },
    windowClosed: (w) => {
      if (moment !== undefined) addFlushSample(w, moment, cpuAtOpen);
    },
    stop: () => {
      uninstall();
      unhook();
    },
  };
}
