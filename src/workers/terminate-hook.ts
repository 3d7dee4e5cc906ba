import { Worker } from 'node:worker_threads';
import type { WorkerFlusher } from './flusher.js';
import { isProfiled, markTerminating } from './registry.js';

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
 * Wrap `Worker.prototype.terminate` in this thread: the worker is marked as
 * being terminated (its preload, if still starting, then stays silent), and a
 * profiled worker writes its open window before termination proceeds (bounded
 * by `flushTimeoutMs`). Returns the un-hook; hooking twice keeps one wrapper.
 */
export function hookTerminate(options: TerminateHookOptions): () => void {
  const proto = Worker.prototype as unknown as Proto;
  const original = proto[ORIGINAL] ?? proto.terminate;
  const { flusher, flushTimeoutMs } = options;
  const wrapped: Terminate = function (this: Worker, callback) {
    let id = -1;
    try {
      id = this.threadId;
      markTerminating(id);
    } catch {
      // an odd receiver: let the original decide
    }
    if (flusher === undefined || id <= 0 || !isProfiled(id)) return original.call(this, callback);
    return flusher.flush(id, flushTimeoutMs).then(() => original.call(this, callback));
  };
  proto[ORIGINAL] = original;
  proto.terminate = wrapped;
  return () => {
    if (proto.terminate === wrapped) {
      proto.terminate = original;
      delete proto[ORIGINAL];
    }
  };
}
