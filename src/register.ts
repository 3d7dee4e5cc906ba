/**
 * Preload entry: `node --import spanfuse/register app.js` (or `--require`).
 * Starts profiling before the app's code runs. A configuration error is
 * printed once and the app runs unprofiled: a profiler must not stop a
 * service from starting.
 */
import { start } from './index.js';

try {
  start();
} catch (err) {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`${message}\nspanfuse: profiling is off for this process.\n`);
}
