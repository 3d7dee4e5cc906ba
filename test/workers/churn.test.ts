import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { churnRun } from '../../bench/workers/churn.js';
import { fixture, lastJsonLine, runNode } from '../support/child.js';

// A short version of bench/workers/churn (which runs >= 50 times for the
// issue note): a few runs per CI pass, each a child process under the preload.
const RUNS = Number(process.env.SPANFUSE_CHURN_RUNS ?? 3);

test(`worker churn under the preload: ${RUNS} runs of 50 workers terminated at random moments, no abort, no preload noise`, async () => {
  let workers = 0;
  for (let i = 0; i < RUNS; i++) {
    const r = await churnRun(process.execPath, { durationMs: 4000, workers: 50, maxLifeMs: 600 });
    assert.equal(r.aborted, false, `run ${i} aborted: ${r.stderr.slice(-3000)}`);
    assert.equal(r.code, 0, `run ${i} exit ${String(r.code)} ${String(r.signal)}: ${r.stderr.slice(-3000)}`);
    assert.equal(r.noise, 0, `run ${i}: a terminated worker's preload printed: ${r.stderr.slice(-3000)}`);
    workers += r.started;
  }
  assert.ok(workers >= RUNS * 50, `only ${workers} workers started`);
});

test('koffi is never loaded in a worker thread', async () => {
  const url = new URL('../../src/runtime/ffi.js', import.meta.url).href;
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    import(workerData.url).then((m) => {
      const r = m.loadLibc();
      const loaded = Object.keys(require.cache).filter((k) => k.includes('koffi'));
      parentPort.postMessage({ ok: r.ok, reason: r.reason, loaded });
    });`;
  const w = new Worker(source, { eval: true, workerData: { url } });
  const r = await new Promise<{ ok: boolean; reason?: string; loaded: string[] }>((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });
  await w.terminate();
  assert.equal(r.ok, false);
  assert.match(r.reason ?? '', /main thread only/);
  assert.deepEqual(r.loaded, []);
});

// Node 20 aborts the process when a worker is terminated while require()
// instantiates the preload's module graph (v8::Module::IsGraphAsync on an
// uninstantiated module): terminate() lets a worker finish loading it first.
test('terminate() right after new Worker() under the preload waits until the preload is loaded (Node < 24)', async () => {
  const r = await runNode(['--import', 'spanfuse/register', fixture('worker-early-terminate-app')], { SPANFUSE_OUTPUT_DIR: mkdtempSync(join(tmpdir(), 'spanfuse-early-')) });
  assert.equal(r.code, 0, r.stderr);
  const out = lastJsonLine<{ atCreate: string[]; states: string[] }>(r.stdout);
  if (Number(process.versions.node.split('.')[0]) >= 24) {
    // Not needed there: terminate() does not wait, nothing is marked.
    assert.deepEqual(out.atCreate, out.atCreate.map(() => 'none'), JSON.stringify(out));
    return;
  }
  // Created with the preload, not loaded yet (a worker needs tens of ms to start).
  assert.ok(out.atCreate.every((s) => s === 'loading' || s === 'loaded'), JSON.stringify(out));
  assert.ok(out.atCreate.includes('loading'), JSON.stringify(out));
  assert.deepEqual(out.states, out.states.map(() => 'loaded'), JSON.stringify(out));
});
