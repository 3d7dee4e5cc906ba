import { threadId } from 'node:worker_threads';
import { markFlushed, markProfiled } from './registry.js';
import type { FlushAnswer } from './registry.js';

/**
 * Worker side of flush-before-terminate. The main thread cannot collect a
 * worker's profile (the sampler lives in the worker's isolate), so it asks the
 * worker to run this function through the inspector (see flusher.ts), which
 * V8 delivers as an interrupt: it runs even while the worker is busy in a
 * synchronous loop. The function writes the open window synchronously and
 * answers through the shared registry.
 */
export const FLUSH_SYMBOL = Symbol.for('spanfuse.worker.flush');
/** What the main thread evaluates in worker `id`; true when a window was written. */
export function flushExpression(id: number): string {
  return `(globalThis[Symbol.for('spanfuse.worker.flush')]?.(${Math.trunc(id)}) === true)`;
}

type Holder = { [FLUSH_SYMBOL]?: (id: number) => boolean };

/**
 * Install `flush` for this worker; returns the uninstaller. `flush` answers
 * 'busy' when the request interrupted the worker's own window close: that
 * window is written once the close goes on, and the main thread asks again.
 */
export function installFlushTarget(flush: () => FlushAnswer): () => void {
  const holder = globalThis as Holder;
  const guarded = (id: number): boolean => {
    // A request meant for another worker (a session mix-up) writes nothing.
    if (id !== threadId) return false;
    let answer: FlushAnswer;
    try {
      answer = flush();
    } catch {
      answer = 'empty';
    }
    markFlushed(answer);
    return answer === 'wrote';
  };
  holder[FLUSH_SYMBOL] = guarded;
  markProfiled();
  return () => {
    if (holder[FLUSH_SYMBOL] === guarded) delete holder[FLUSH_SYMBOL];
  };
}
