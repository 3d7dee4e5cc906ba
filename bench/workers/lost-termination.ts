/**
 * The Node 24 bug spanfuse works around (src/workers/registry.ts,
 * enterFlushRequest), without spanfuse: workers in synchronous loops each
 * run a busy `Runtime.evaluate` through the main thread's inspector session
 * (`NodeWorker.sendMessageToWorker`, delivered as an interrupt) while the
 * main thread calls `process.exit()`. Node (20.20 and 24.21 here) loses
 * the termination of a worker inside the evaluation, which then runs on,
 * and the process hangs joining it (5 of 5 runs on each, 2026-12-07; one
 * early run on Node 20 exited).
 *
 *   node dist/bench/workers/lost-termination.js [--runs 5] [--node path] [--workers 4]
 *
 * Each run is a child process (this file with --child), killed after 10 s.
 */
import { spawnSync } from 'node:child_process';
import { Session } from 'node:inspector';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';

const { values } = parseArgs({
  options: {
    child: { type: 'boolean', default: false },
    runs: { type: 'string', default: '5' },
    node: { type: 'string', default: process.execPath },
    workers: { type: 'string', default: '4' },
  },
});

if (values.child) child(Number(values.workers));
else parent();

function parent(): void {
  let hung = 0;
  const runs = Number(values.runs);
  for (let i = 0; i < runs; i++) {
    const r = spawnSync(values.node, [fileURLToPath(import.meta.url), '--child', '--workers', values.workers], { timeout: 10_000, killSignal: 'SIGKILL', encoding: 'utf8' });
    const h = r.signal === 'SIGKILL';
    if (h) hung++;
    process.stdout.write(`run ${i + 1}: ${h ? 'hung (killed after 10 s)' : `exit ${r.status ?? r.signal}`}\n`);
  }
  process.stdout.write(`${values.node}: ${hung} of ${runs} runs hung\n`);
}

function child(n: number): void {
  const session = new Session();
  session.connect();
  const sessions: string[] = [];
  (session as unknown as NodeJS.EventEmitter).on('NodeWorker.attachedToWorker', (m: { params: { sessionId: string } }) => sessions.push(m.params.sessionId));
  session.post('NodeWorker.enable', { waitForDebuggerOnStart: false });
  let running = 0;
  const loop = `require('node:worker_threads').parentPort.postMessage(1); for (;;) { const e = Date.now() + 3; while (Date.now() < e); }`;
  for (let i = 0; i < n; i++) {
    new Worker(loop, { eval: true }).once('message', () => {
      if (++running === n) setTimeout(exitDuringEvaluations, 200);
    });
  }
  function exitDuringEvaluations(): void {
    const expression = '{ const e = Date.now() + 300; while (Date.now() < e); 1 }';
    for (const sessionId of sessions) {
      session.post('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify({ id: 1, method: 'Runtime.evaluate', params: { expression } }) });
    }
    const e = Date.now() + 100;
    while (Date.now() < e);
    process.exit(0);
  }
}
