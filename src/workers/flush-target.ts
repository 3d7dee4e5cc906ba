import { threadId } from 'node:worker_threads';
import { enterFlushRequest, leaveFlushRequest, markFlushed, markProfiled } from './registry.js';
import type { FlushAnswer } from './registry.js';

/**
 * Worker side of flush-before-terminate. The main thread cannot collect a
 * worker's profile (the sampler lives in the worker's isolate), so it asks the
 * worker to run this function through the inspector (see flusher.ts). V8
 * delivers the request as an interrupt: it runs wherever the worker's
 * JavaScript happens to be, even inside a RegExp's native code or in
 * spanfuse's own window work. So a request comes in two strengths:
 * - 'turn': only note the moment and write the window on the worker's next
 *   event-loop turn (a setImmediate), where nothing is half-done;
 * - 'now': write it inside the interrupt; the main thread sends this only
 *   when the worker's loop took no turn in time (a synchronous loop).
 * Either way the answer comes through the shared registry.
 */
export const FLUSH_SYMBOL = Symbol.for('spanfuse.worker.flush');

/** How a flush request is served: on the worker's next loop turn, or at once. */
export type FlushWhen = 'turn' | 'now';

/** What the main thread evaluates in worker `id`. */
export function flushExpression(id: number, when: FlushWhen): string {
  return `(globalThis[Symbol.for('spanfuse.worker.flush')]?.(${Math.trunc(id)}, ${JSON.stringify(when)}) === true)`;
}

type Holder = { [FLUSH_SYMBOL]?: (id: number, when: FlushWhen) => boolean };

/**
 * Install `flush` for this worker; returns the uninstaller. `capture` runs
 * where the request interrupted the worker (cheap: no window work), and its
 * result goes to `flush`. `flush` answers 'busy' when the request
 * interrupted the worker's own window work: that window is written once the
 * work goes on, and the main thread asks again. A request that interrupts a
 * flush under way is answered 'busy' here, for the same reason.
 */
export function installFlushTarget<M>(flush: (captured: M | undefined) => FlushAnswer, capture?: () => M): () => void {
  const holder = globalThis as Holder;
  let flushing = false;
  /** The turn flush waiting for its setImmediate, if any. */
  let queued: NodeJS.Immediate | undefined;
  const run = (captured: M | undefined): boolean => {
    let answer: FlushAnswer;
    flushing = true;
    try {
      answer = flush(captured);
    } catch {
      answer = 'empty';
    } finally {
      flushing = false;
    }
    markFlushed(answer);
    return answer === 'wrote';
  };
  const guarded = (id: number, when: FlushWhen): boolean => {
    // A request meant for another worker (a session mix-up) writes nothing.
    if (id !== threadId) return false;
    // The main thread waits for this to return before any termination of
    // this worker proceeds, and once it has begun, a request does nothing
    // (see enterFlushRequest: Node 20 and 24 lose a termination that lands here).
    if (!enterFlushRequest()) return false;
    try {
      return serve(when);
    } finally {
      leaveFlushRequest();
    }
  };
  const serve = (when: FlushWhen): boolean => {
    if (flushing) {
      markFlushed('busy');
      return false;
    }
    let captured: M | undefined;
    try {
      captured = capture?.();
    } catch {
      captured = undefined;
    }
    if (when === 'now') {
      // Served here: a turn flush still waiting would write a second window.
      if (queued !== undefined) clearImmediate(queued);
      queued = undefined;
      return run(captured);
    }
    queued ??= setImmediate(() => {
      queued = undefined;
      run(captured);
    });
    return false;
  };
  holder[FLUSH_SYMBOL] = guarded;
  markProfiled();
  return () => {
    if (queued !== undefined) clearImmediate(queued);
    queued = undefined;
    if (holder[FLUSH_SYMBOL] === guarded) delete holder[FLUSH_SYMBOL];
  };
}
