/**
 * Preload entry: `node --import spanfuse/register app.js` (or `--require`).
 * Starts profiling before the app's code runs. A configuration error is
 * printed once and the app runs unprofiled: a profiler must not stop a
 * service from starting.
 */
import { workerData } from 'node:worker_threads';
import { start } from './index.js';

// spanfuse's own helper threads are never profiled.
const internal = (workerData as { spanfuseInternal?: unknown } | null)?.spanfuseInternal === true;

try {
  if (!internal) start();
} catch (err) {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`${message}\nspanfuse: profiling is off for this process.\n`);
}
