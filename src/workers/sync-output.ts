import type { ProfileExporter } from '../export/index.js';
import { JsonlSpanProcessor } from '../tracing/index.js';

/**
 * Files written by worker threads go out synchronously. A worker can be
 * terminated at any moment, and on Node 20 a termination that lands while
 * the worker is inside an `fs/promises` call aborts the whole process
 * (`Assertion failed: (req_wrap) != nullptr` in node_file-inl.h). Workers
 * therefore never use fs/promises: profile windows go through the
 * exporter's `writeSync` (a few ms on the worker's own thread, once per
 * window) and the span file is appended with `flushSync` on its timer.
 * Exporters without `writeSync` (network) stay asynchronous.
 */
export function workerSafeExporter(e: ProfileExporter): ProfileExporter {
  const writeSync = e.writeSync?.bind(e);
  if (writeSync === undefined) return e;
  const out: ProfileExporter = {
    name: e.name,
    export: (w) => Promise.resolve(writeSync(w) ? { kind: 'success' as const } : { kind: 'failure' as const, reason: 'synchronous write failed (see counters)' }),
    // Nothing queued: every window was written when it was exported.
    shutdown: () => Promise.resolve(),
    writeSync,
  };
  if (e.pin) out.pin = e.pin.bind(e);
  if (e.unpin) out.unpin = e.unpin.bind(e);
  if (e.stats) out.stats = e.stats.bind(e);
  return out;
}

/** spans.jsonl for a worker thread: every flush is synchronous. */
export class WorkerJsonlSpanProcessor extends JsonlSpanProcessor {
  override forceFlush(): Promise<void> {
    this.flushSync();
    return Promise.resolve();
  }
}
