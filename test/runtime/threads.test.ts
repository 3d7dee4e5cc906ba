import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ThreadInventory, currentThreadIdentity, listThreads } from '../../src/runtime/index.js';
import type { ThreadInfo, ThreadpoolNaming } from '../../src/runtime/index.js';

const linux = process.platform === 'linux';

// The worker names itself through the same API the sampler uses and reports
// the OS thread id it sees.
const workerSource = `
  const { parentPort, workerData } = require('node:worker_threads');
  import(workerData.url).then((m) => {
    const id = m.currentThreadIdentity({ name: workerData.name });
    parentPort.postMessage(id);
    setInterval(() => {}, 1000);
  });
`;

test('inventory names main, a named worker and threadpool threads by OS id', { skip: !linux }, async () => {
  const inventory = new ThreadInventory();
  const pool = await inventory.nameThreadpool(4);
  const main = currentThreadIdentity();
  assert.equal(main.tid, process.pid);
  assert.equal(main.name, 'main');

  const url = new URL('../../src/runtime/index.js', import.meta.url).href;
  const worker = new Worker(workerSource, { eval: true, name: 'img-resize', workerData: { url, name: 'img-resize' } });
  try {
    const reported = await new Promise<{ tid: number; name: string }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    // Threadpool work from both fs and crypto.
    await new Promise<void>((resolve, reject) => readFile(new URL(import.meta.url), (e) => (e ? reject(e) : resolve())));
    const { pbkdf2: cryptoPbkdf2 } = await import('node:crypto');
    await new Promise<void>((resolve, reject) =>
      cryptoPbkdf2('pw', 'salt', 1000, 32, 'sha256', (e) => (e ? reject(e) : resolve())),
    );

    const threads = inventory.list();
    const byTid = new Map(threads.map((t) => [t.tid, t]));
    assert.equal(byTid.get(process.pid)?.kind, 'main');
    assert.equal(reported.name, 'img-resize');
    assert.notEqual(reported.tid, process.pid);
    const w = byTid.get(reported.tid);
    assert.equal(w?.kind, 'worker');
    assert.equal(w?.name, 'img-resize');
    assert.equal(w?.workerThreadId, worker.threadId);

    assert.equal(pool.named, true, pool.reason);
    const poolThreads = threads.filter((t) => t.kind === 'libuv-threadpool');
    assert.equal(poolThreads.length, pool.tids.length);
    assert.ok(poolThreads.length >= 1);
    for (const t of poolThreads) assert.ok(pool.tids.includes(t.tid));
    // Node's own startup threads are neither main, worker nor pool.
    assert.ok(threads.some((t) => t.kind === 'v8'));
    // The main thread kept its original name.
    assert.notEqual(byTid.get(process.pid)?.comm, 'libuv-worker');
    // A one-shot listing without startup knowledge still finds the worker.
    assert.equal(listThreads().find((t) => t.tid === reported.tid)?.name, 'img-resize');
  } finally {
    await worker.terminate();
  }
});

test('a --require preload names the threadpool by inheritance before it exists', { skip: !linux }, () => {
  const fixture = new URL('./fixtures/preload-names.js', import.meta.url);
  const out = execFileSync(process.execPath, ['--require', fileURLToPath(fixture), '-e', ''], { encoding: 'utf8' });
  const { pool, threads } = JSON.parse(out) as { pool: ThreadpoolNaming; threads: ThreadInfo[] };
  assert.equal(pool.named, true, pool.reason);
  const poolThreads = threads.filter((t) => t.kind === 'libuv-threadpool').map((t) => t.tid);
  assert.deepEqual(poolThreads.sort(), [...pool.tids].sort());
  const main = threads.find((t) => t.kind === 'main');
  assert.ok(main);
  assert.notEqual(main.comm, 'libuv-worker', 'main thread name restored');
  assert.ok(threads.filter((t) => t.kind === 'v8').length >= 4, 'V8 platform threads found');
});
