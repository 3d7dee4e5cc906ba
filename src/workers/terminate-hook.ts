import { isMainThread, Worker } from 'node:worker_threads';
import type { WorkerFlusher } from './flusher.js';
import { isProfiled, markTerminating, waitStageLoadsSync, whenLoaded } from './registry.js';

type Terminate = (this: Worker, callback?: (err: Error | null, code: number) => void) => Promise<number>;
const ORIGINAL = Symbol.for('spanfuse.worker.terminate.original');
type Proto = { terminate: Terminate; [ORIGINAL]?: Terminate };

export interface TerminateHookOptions {
  /** Main thread: asks a profiled worker to write its window first. */
  readonly flusher?: WorkerFlusher;
  /** Longest wait for the worker's answer before terminating anyway. */
  readonly flushTimeoutMs: number;
}

/**
 * Longest wait, per terminate(), for a worker started with the preload to
 * finish loading it: tens of ms usually, but 1-3 s were measured with 50
 * workers starting at once on 2 busy cores, and terminating at a short
 * bound lands in the module graph's instantiation more often than at random
 * (bench/workers/churn: 2 aborts in 6 runs with a 3 s bound). A safety net
 * only: a worker that fails to load it exits, which ends the wait too.
 */
export const PRELOAD_WAIT_MS = 30_000;

/**
 * Longest the process's exit waits for workers loading one of spanfuse's
 * stages outside the preload (registry.ts, beginStageLoad): tens of ms
 * each, usually.
 */
export const EXIT_STAGE_WAIT_MS = 5000;

/**
 * The process is exiting (main thread's `exit` event) and Node terminates
 * every worker right after: let a worker that loads one of spanfuse's
 * stages with require(esm) finish first (Node 20 aborts otherwise). Such a
 * worker may be one the preload did not start (its own code called
 * start()), so inject.ts's list of workers does not know it.
 */
function beforeWorkersStop(): void {
  try {
    waitStageLoadsSync(performance.now() + EXIT_STAGE_WAIT_MS);
  } catch {
    // nothing to wait with: exit as before
  }
}

/** Resolves when `waiting` settles (the preload loaded, a flush answered, or the wait ran out), or the worker exits. */
function untilExit(worker: Worker, waiting: Promise<unknown>): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      worker.off('exit', done);
      resolve();
    };
    worker.once('exit', done);
    waiting.then(done, done);
  });
}

/**
 * Wrap `Worker.prototype.terminate` in this thread: the worker is marked as
 * being terminated (its preload, if still starting, then stays silent); a
 * worker still loading spanfuse's preload, or one of its stages, is let
 * finish loading first (bounded by {@link PRELOAD_WAIT_MS}: on Node 20,
 * terminating a worker while it instantiates ES modules through require()
 * aborts the process; on the main thread the process's exit waits too, see
 * {@link beforeWorkersStop}); and a profiled
 * worker writes its open window before termination proceeds (bounded by
 * `flushTimeoutMs`). Returns the un-hook; hooking twice keeps one wrapper.
 */
export function hookTerminate(options: TerminateHookOptions): () => void {
  const proto = Worker.prototype as unknown as Proto;
  const original = proto[ORIGINAL] ?? proto.terminate;
  const { flusher, flushTimeoutMs } = options;
  const proceed = (worker: Worker, id: number, callback: Parameters<Terminate>[0]): Promise<number> => {
    if (flusher === undefined || id <= 0 || !isProfiled(id)) return original.call(worker, callback);
    // A worker that ends on its own meanwhile writes its window itself (its
    // own exit listener) and answers no flush request: stop waiting then.
    return untilExit(worker, flusher.flush(id, flushTimeoutMs)).then(() => original.call(worker, callback));
  };
  const wrapped: Terminate = function (this: Worker, callback) {
    let id = -1;
    try {
      id = this.threadId;
      markTerminating(id);
    } catch {
      // an odd receiver: let the original decide
    }
    const loading = whenLoaded(id, PRELOAD_WAIT_MS);
    if (loading === undefined) return proceed(this, id, callback);
    return untilExit(this, loading).then(() => proceed(this, id, callback));
  };
  proto[ORIGINAL] = original;
  proto.terminate = wrapped;
  if (isMainThread) process.on('exit', beforeWorkersStop);
  return () => {
    if (isMainThread) process.off('exit', beforeWorkersStop);
    if (proto.terminate === wrapped) {
      proto.terminate = original;
      delete proto[ORIGINAL];
    }
  };
}
