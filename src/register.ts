/**
 * Preload entry: `node --import spanfuse/register app.js` (or `--require`).
 * Starts profiling before the app's code runs. A configuration error is
 * printed once and the app runs unprofiled: a profiler must not stop a
 * service from starting.
 */
import { getEnvironmentData, isMainThread, setEnvironmentData, workerData } from 'node:worker_threads';
import { current, start } from './index.js';
import { injectPreloadIntoWorkers, markPreloaded, selfTerminating } from './workers/index.js';

// spanfuse's own helper threads are never profiled.
const internal = (workerData as { spanfuseInternal?: unknown } | null)?.spanfuseInternal === true;

/**
 * Set by the main thread when its start failed (and it said so): workers
 * created afterwards that still get the preload (an inherited `--import`)
 * stay off too instead of repeating the same error, one per worker.
 */
const OFF_KEY = 'spanfuse.preload.off';

/** A worker terminated while this preload ran: its errors are noise. */
function terminating(): boolean {
  try {
    return selfTerminating();
  } catch {
    return true;
  }
}

try {
  // Already running: an eval worker can get the preload both ways.
  if (!internal && current() === undefined && (isMainThread || getEnvironmentData(OFF_KEY) !== true)) {
    const sf = start();
    // Eval workers and workers with their own execArgv would run without it.
    if (sf !== undefined && isMainThread) injectPreloadIntoWorkers(import.meta.url);
  }
} catch (err) {
  if (isMainThread) setEnvironmentData(OFF_KEY, true);
  if (!terminating()) {
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`${message}\nspanfuse: profiling is off for this process.\n`);
  }
} finally {
  // A worker's terminate() waits for this (see workers/terminate-hook.ts).
  if (!isMainThread) markPreloaded();
}
