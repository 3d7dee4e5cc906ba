import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { Diagnostics } from '../../src/core/diagnostics.js';
import { Problems } from '../../src/config/env.js';
import { parseRuntimeConfig } from '../../src/config/runtime.js';
import { RuntimeSignals } from '../../src/runtime/index.js';

test('an unsupported platform degrades with one notice and no thread signals', async () => {
  const warnings: string[] = [];
  const rs = new RuntimeSignals(parseRuntimeConfig({}, new Problems(), { processContext: false, threadContext: false }), new Diagnostics((m) => warnings.push(m)), {
    platform: { linux: false, arch: undefined, unsupportedReason: 'per-thread kernel signals need Linux /proc; this is darwin' },
  });
  await rs.start();
  try {
    const w = rs.collectWindow(0n, 1n);
    assert.equal(w.offCpu, undefined);
    assert.equal(w.attributes['profiler.unsupported.l3.misses'], 'per-thread kernel signals need Linux /proc; this is darwin');
    assert.equal(w.attributes['profiler.unsupported.futex.wait_ns'], 'per-thread kernel signals need Linux /proc; this is darwin');
    const d = rs.spanCounters().end(rs.spanCounters().begin());
    assert.equal('profiler.futex.wait_ns' in d, false);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', /darwin/);
  } finally {
    await rs.stop();
    await rs.stop(); // idempotent
  }
});

// A worker builds its own span counters from the main thread's shared table.
const workerSource = `
  const { parentPort, workerData } = require('node:worker_threads');
  import(workerData.url).then(async (m) => {
    m.currentThreadIdentity({ name: 'counter-worker' });
    const { source, stop } = m.createThreadSpanCounters(workerData.sab);
    // Let the sampler pick this thread up (it re-lists threads every second).
    await new Promise((r) => setTimeout(r, 1300));
    const t = source.begin();
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 150);
    await new Promise((r) => setTimeout(r, 60));
    parentPort.postMessage(source.end(t));
    stop();
  });
`;

test('a worker thread gets futex wait and switches from the shared sampler table', { skip: process.platform !== 'linux' }, async () => {
  const rs = new RuntimeSignals(parseRuntimeConfig({}, new Problems(), { threadStateHz: 50 }), new Diagnostics(() => undefined));
  await rs.start();
  try {
    const sab = rs.sharedState();
    assert.ok(sab);
    const url = new URL('../../src/runtime/index.js', import.meta.url).href;
    const worker = new Worker(workerSource, { eval: true, workerData: { url, sab } });
    const d = await new Promise<Record<string, number>>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await worker.terminate();
    const futex = d['profiler.futex.wait_ns'] ?? -1;
    assert.ok(futex > 100e6 && futex < 300e6, `worker futex wait ${futex / 1e6} ms`);
    assert.ok((d['profiler.ctx_switches.voluntary'] ?? 0) >= 1);
  } finally {
    await rs.stop();
  }
});
