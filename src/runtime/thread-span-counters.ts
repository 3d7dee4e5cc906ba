import type { SpanCounterSource } from '../core/counters.js';
import { LoopGcMonitor } from './loop-gc.js';
import { SpanWindowCountersUnavailable, ThreadWindowCounters } from './span-counters.js';
import { StateReader } from './state-reader.js';
import { attachStateViews } from './state-table.js';
import { currentTid } from './thread-id.js';

export interface ThreadSpanCounters {
  readonly source: SpanCounterSource;
  /** Stops this thread's event-loop timer. */
  stop(): void;
}

/**
 * Span counters for the calling thread (typically a worker): its own
 * event-loop delay timer, and futex/run-queue/switch figures from the main
 * thread's sampler through its shared table (`RuntimeSignals.sharedState()`,
 * passed in workerData). Without the table, only event-loop delay is offered.
 */
export function createThreadSpanCounters(shared?: SharedArrayBuffer): ThreadSpanCounters {
  try {
    const views = shared ? attachStateViews(shared) : undefined;
    const loop = new LoopGcMonitor();
    loop.start();
    const source = new ThreadWindowCounters({
      tid: currentTid(),
      loop,
      ...(views ? { state: new StateReader(views) } : {}),
    });
    return { source, stop: () => loop.stop() };
  } catch {
    return { source: new SpanWindowCountersUnavailable(), stop: () => undefined };
  }
}
