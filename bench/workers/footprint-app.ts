/**
 * Child of bench/workers/footprint: starts WORKERS idle eval workers one
 * after another, each timed from `new Worker()` to its first message (with
 * the process's CPU over the same time), waits SETTLE_MS, and prints the
 * process's RSS and the timings as one JSON line.
 */
import { Worker } from 'node:worker_threads';

const n = Number(process.env.WORKERS ?? 8);
const settleMs = Number(process.env.SETTLE_MS ?? 1500);
const startMs: number[] = [];
const cpuMs: number[] = [];
const workers: Worker[] = [];
for (let i = 0; i < n; i++) {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const w = new Worker("require('node:worker_threads').parentPort.postMessage(1); setInterval(() => {}, 1000);", { eval: true });
  await new Promise((resolve) => w.once('message', resolve));
  const c = process.cpuUsage(c0);
  startMs.push(performance.now() - t0);
  cpuMs.push((c.user + c.system) / 1000);
  workers.push(w);
}
await new Promise((resolve) => setTimeout(resolve, settleMs));
const rssMb = process.memoryUsage().rss / 1e6;
for (const w of workers) await w.terminate();
console.log(JSON.stringify({ rssMb, startMs, cpuMs }));
