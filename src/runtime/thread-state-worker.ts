/**
 * Entry of the thread-state sampler worker (see thread-state-sampler.ts).
 * Runs the sampling loop off the main thread and writes into the shared state
 * table. It sleeps in Atomics.wait between passes rather than on a libuv
 * timer: measured on a 2-vCPU Firecracker VM, a wake-up through the worker's
 * event loop cost ~120 µs of CPU against ~70 µs for a bare futex wait. The
 * main thread stops it by setting H_STOP and notifying.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { H_STOP, H_WORKER_TID, attachStateViews } from './state-table.js';
import { ThreadStateLoop, passesPerSecond } from './thread-state-loop.js';
import { fs } from '../core/builtins.js';
import { procThreadSelfTid } from '../core/proc-tid.js';

const { writeFileSync } = fs;

interface Data {
  sab: SharedArrayBuffer;
  intervalMs: number;
  pid: number;
  procSelf: string;
  futexNrs: number[];
  idleEvery: number;
  threads: 'app' | 'all';
}

function main(): void {
  const data = workerData as Data;
  const views = attachStateViews(data.sab);
  const port = parentPort;
  if (views === undefined || port === null) return;
  const tid = procThreadSelfTid() || -1;
  Atomics.store(views.header, H_WORKER_TID, tid);
  try {
    // Visible in top -H and to external profilers; this thread creates none.
    writeFileSync('/proc/thread-self/comm', 'spanfuse-state');
  } catch {
    // naming is cosmetic
  }
  const perSecond = passesPerSecond(data.intervalMs);
  const loop = new ThreadStateLoop(views, {
    procSelf: data.procSelf,
    pid: data.pid,
    selfTid: tid,
    futexNrs: data.futexNrs,
    refreshEvery: perSecond,
    wchanEvery: perSecond,
    idleEvery: data.idleEvery,
    threads: data.threads,
  });
  // One pass before reporting ready, so every thread is tracked from then on.
  loop.pass();
  port.postMessage({ ready: tid });
  // Leave the turn so the message goes out, then loop synchronously.
  setImmediate(() => {
    while (Atomics.wait(views.header, H_STOP, 0, data.intervalMs) !== 'not-equal') {
      if (Atomics.load(views.header, H_STOP) !== 0) break;
      loop.countedPass();
    }
    loop.close();
    port.close();
  });
}

main();
