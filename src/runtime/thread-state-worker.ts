/**
 * Entry of the thread-state sampler worker (see thread-state-sampler.ts).
 * Runs the sampling loop on a timer off the main thread and writes into the
 * shared state table; stops on a 'stop' message.
 */
import { readlinkSync, writeFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { H_ERRORS, H_WORKER_TID, attachStateViews } from './state-table.js';
import { ThreadStateLoop } from './thread-state-loop.js';

interface Data {
  sab: SharedArrayBuffer;
  intervalMs: number;
  pid: number;
  procSelf: string;
  futexNrs: number[];
}

function selfTid(): number {
  try {
    const link = readlinkSync('/proc/thread-self');
    return Number(link.slice(link.lastIndexOf('/') + 1));
  } catch {
    return -1;
  }
}

function main(): void {
  const data = workerData as Data;
  const views = attachStateViews(data.sab);
  const port = parentPort;
  if (views === undefined || port === null) return;
  const tid = selfTid();
  Atomics.store(views.header, H_WORKER_TID, tid);
  try {
    // Visible in top -H and to external profilers; this thread creates none.
    writeFileSync('/proc/thread-self/comm', 'spanfuse-state');
  } catch {
    // naming is cosmetic
  }
  const passesPerSecond = Math.max(1, Math.round(1000 / data.intervalMs));
  const loop = new ThreadStateLoop(views, {
    procSelf: data.procSelf,
    pid: data.pid,
    selfTid: tid,
    futexNrs: data.futexNrs,
    refreshEvery: passesPerSecond,
    wchanEvery: passesPerSecond,
  });
  const timer = setInterval(() => {
    try {
      loop.pass();
    } catch {
      Atomics.add(views.header, H_ERRORS, 1);
    }
    if (loop.errors > 0) {
      Atomics.add(views.header, H_ERRORS, loop.errors);
      loop.errors = 0;
    }
  }, data.intervalMs);
  port.on('message', (m) => {
    if (m !== 'stop') return;
    clearInterval(timer);
    loop.close();
    port.close();
  });
  // One pass before reporting ready, so every thread is tracked from then on.
  loop.pass();
  port.postMessage({ ready: tid });
}

main();
