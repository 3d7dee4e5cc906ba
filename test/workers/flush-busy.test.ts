import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { WorkerFlusher } from '../../src/workers/flusher.js';
import { ensureRegistry, isProfiled } from '../../src/workers/registry.js';

// The real protocol: an inspector session with the NodeWorker domain, a real
// worker with a flush target, answers through the shared registry. The
// target stands in for spanfuse's (which answers 'busy' while the worker
// closes a window) with a scripted sequence of answers.
const TARGET = new URL('../../src/workers/flush-target.js', import.meta.url).href;

let flusher: WorkerFlusher | undefined;
before(() => {
  assert.ok(ensureRegistry(), 'shared registry');
  flusher = WorkerFlusher.start();
  assert.ok(flusher, 'inspector session');
});
after(() => flusher?.close());

/** A worker whose flush target answers `answers` in turn, then 'wrote'; resolves once a flush can reach it. */
async function scripted(answers: string[]): Promise<Worker> {
  const w = new Worker(
    `(async () => {
      const { installFlushTarget } = await import(${JSON.stringify(TARGET)});
      const answers = ${JSON.stringify(answers)};
      installFlushTarget(() => answers.shift() ?? 'wrote');
      require('node:worker_threads').parentPort.postMessage('ready');
      setInterval(() => {}, 1000);
    })();`,
    { eval: true },
  );
  await new Promise((resolve) => w.once('message', resolve));
  const until = Date.now() + 10_000;
  while (!(flusher?.reachable(w.threadId) ?? false) || !isProfiled(w.threadId)) {
    assert.ok(Date.now() < until, 'the inspector attached to the worker');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return w;
}

test('a worker that answers busy (closing its window) is asked again until it writes, within the bound', async () => {
  const f = flusher as WorkerFlusher;
  const w = await scripted(['busy', 'busy', 'busy']);
  try {
    const before = f.stats();
    assert.equal(await f.flush(w.threadId, 5000), true);
    const s = f.stats();
    assert.equal(s.retried - before.retried, 3);
    assert.equal(s.flushed - before.flushed, 1);
    assert.equal(s.empty + s.timedOut + s.unreachable, before.empty + before.timedOut + before.unreachable);
  } finally {
    await w.terminate();
  }
});

test('a worker still busy at the bound counts as timed out, once; an empty answer is not asked again', async () => {
  const f = flusher as WorkerFlusher;
  const busy = await scripted(Array.from({ length: 1000 }, () => 'busy'));
  const empty = await scripted(['empty']);
  try {
    const before = f.stats();
    assert.equal(await f.flush(busy.threadId, 300), false);
    let s = f.stats();
    assert.equal(s.timedOut - before.timedOut, 1);
    assert.ok(s.retried - before.retried >= 2, `asked again ${s.retried - before.retried} times in 300 ms`);
    assert.equal(s.flushed, before.flushed);
    assert.equal(await f.flush(empty.threadId, 2000), false);
    s = f.stats();
    assert.equal(s.empty - before.empty, 1);
    assert.equal(s.timedOut - before.timedOut, 1);
  } finally {
    await Promise.all([busy.terminate(), empty.terminate()]);
  }
});

/**
 * A worker that spends its time in JavaScript: 5 ms chunks back to back,
 * each on its own loop turn (`chunked`), one endless synchronous loop
 * (`stuck`), or one 400 ms synchronous loop and then an idle loop (`stall`).
 * Its flush target reports each time it writes, with whether a chunk was
 * running then, and answers 'wrote'.
 */
async function busyWorker(mode: 'chunked' | 'stuck' | 'stall'): Promise<{ w: Worker; wroteInChunk: () => Promise<boolean>; writes: () => number }> {
  const w = new Worker(
    `(async () => {
      const { installFlushTarget } = await import(${JSON.stringify(TARGET)});
      const { parentPort } = require('node:worker_threads');
      let inChunk = false;
      installFlushTarget(() => {
        parentPort.postMessage({ wroteInChunk: inChunk });
        return 'wrote';
      });
      parentPort.postMessage('ready');
      const spin = (ms) => { const end = performance.now() + ms; while (performance.now() < end); };
      const chunk = () => {
        inChunk = true;
        spin(5);
        inChunk = false;
        setImmediate(chunk);
      };
      const mode = ${JSON.stringify(mode)};
      if (mode === 'chunked') setImmediate(chunk);
      else if (mode === 'stuck') setTimeout(() => { inChunk = true; for (;;) spin(1000); }, 0);
      else setTimeout(() => { inChunk = true; spin(400); inChunk = false; setInterval(() => {}, 1000); }, 0);
    })();`,
    { eval: true },
  );
  await new Promise((resolve) => w.once('message', resolve));
  let writes = 0;
  const wrote = new Promise<boolean>((resolve) =>
    w.on('message', (m: { wroteInChunk?: boolean }) => {
      if (typeof m?.wroteInChunk !== 'boolean') return;
      writes++;
      resolve(m.wroteInChunk);
    }),
  );
  const until = Date.now() + 10_000;
  while (!(flusher?.reachable(w.threadId) ?? false) || !isProfiled(w.threadId)) {
    assert.ok(Date.now() < until, 'the inspector attached to the worker');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { w, wroteInChunk: () => wrote, writes: () => writes };
}

test("a worker whose loop keeps turning writes on a turn of its own, never inside the JavaScript the request interrupted", async () => {
  const f = flusher as WorkerFlusher;
  for (let i = 0; i < 5; i++) {
    const { w, wroteInChunk } = await busyWorker('chunked');
    try {
      const before = f.stats();
      assert.equal(await f.flush(w.threadId, 5000), true);
      assert.equal(await wroteInChunk(), false, 'the window was written between chunks');
      assert.equal(f.stats().interrupted, before.interrupted, 'no request had to be served inside the interrupt');
    } finally {
      await w.terminate();
    }
  }
});

test('a worker stuck in a synchronous loop still writes, inside the interrupt, after the turn wait', async () => {
  const f = flusher as WorkerFlusher;
  const { w, wroteInChunk } = await busyWorker('stuck');
  try {
    // Let the endless loop start.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const before = f.stats();
    assert.equal(await f.flush(w.threadId, 5000), true);
    assert.equal(await wroteInChunk(), true, 'written where the loop was');
    const s = f.stats();
    assert.equal(s.interrupted - before.interrupted, 1);
    assert.equal(s.flushed - before.flushed, 1);
  } finally {
    await w.terminate();
  }
});

test('a request served inside the interrupt drops the turn flush it had queued: one window, not two', async () => {
  const f = flusher as WorkerFlusher;
  const { w, wroteInChunk, writes } = await busyWorker('stall');
  try {
    // Let the 400 ms loop start: the turn request waits behind it and escalates.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const before = f.stats();
    assert.equal(await f.flush(w.threadId, 5000), true);
    assert.equal(await wroteInChunk(), true, 'written inside the loop');
    assert.equal(f.stats().interrupted - before.interrupted, 1);
    // The loop has ended and the worker's event loop turns again.
    await new Promise((resolve) => setTimeout(resolve, 700));
    assert.equal(writes(), 1, 'the queued turn flush did not write again');
  } finally {
    await w.terminate();
  }
});
