import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, readdirSync, rmSync, constants } from 'node:fs';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Profile } from 'pprof-format';
import { Diagnostics } from '../../src/core/diagnostics.js';
import { parseRuntimeConfig } from '../../src/config/runtime.js';
import { Problems } from '../../src/config/env.js';
import { RuntimeSignals, LABEL_WAIT_REASON } from '../../src/runtime/index.js';
import { loadLibc } from '../../src/runtime/ffi.js';

const linux = process.platform === 'linux';

function config() {
  const problems = new Problems();
  // The worker host: these tests watch the main thread's own wait reasons.
  const c = parseRuntimeConfig({}, problems, { threadStateHz: 100, threadStateHost: 'worker' });
  assert.deepEqual(problems.list, []);
  return c;
}

/** Off-CPU ns of `tid` per wait reason in a profile. */
function offCpuByReason(p: Profile | undefined, tid: number): Map<string, number> {
  const out = new Map<string, number>();
  if (!p) return out;
  const s = p.stringTable.strings;
  for (const sample of p.sample) {
    const labels = new Map(sample.label.map((l) => [s[Number(l.key)], s[Number(l.str)]]));
    if (labels.get('thread.id') !== String(tid)) continue;
    const reason = labels.get(LABEL_WAIT_REASON) ?? '?';
    out.set(reason, (out.get(reason) ?? 0) + Number(sample.value[0]));
  }
  return out;
}

function frames(p: Profile): string[] {
  return p.function.map((f) => p.stringTable.strings[Number(f.name)] ?? '');
}

async function withSignals(fn: (rs: RuntimeSignals) => Promise<void>): Promise<void> {
  const rs = new RuntimeSignals(config(), new Diagnostics(() => undefined));
  await rs.start();
  try {
    // Let the sampler take a few passes so every thread is tracked.
    await new Promise((r) => setTimeout(r, 100));
    await fn(rs);
  } finally {
    await rs.stop();
  }
}

function now(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}

test('a 200 ms Atomics.wait shows as ~200 ms futex off-CPU on the main thread', { skip: !linux }, async () => {
  await withSignals(async (rs) => {
    const counters = rs.spanCounters();
    rs.collectWindow(now(), now());
    const token = counters.begin();
    const before = rs.threadTotals(process.pid);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    const deltas = counters.end(token);
    await new Promise((r) => setTimeout(r, 30));
    const after = rs.threadTotals(process.pid);
    assert.ok(before && after);
    const rangeFutex = after.futexNs - before.futexNs;
    assert.ok(rangeFutex > 140e6 && rangeFutex < 300e6, `futex over the range ${rangeFutex / 1e6} ms`);
    await new Promise((r) => setTimeout(r, 30));
    const w = rs.collectWindow(now(), now());
    const byReason = offCpuByReason(w.offCpu, process.pid);
    const futex = byReason.get('futex') ?? 0;
    assert.ok(futex > 140e6 && futex < 300e6, `futex off-CPU ${futex / 1e6} ms`);
    assert.ok(w.offCpu && frames(w.offCpu).includes('futex'));
    // The sampler sees the wait end at its next pass, after end().
    const spanFutex = deltas['profiler.futex.wait_ns'] ?? -1;
    assert.ok(spanFutex > 120e6 && spanFutex < 300e6, `span futex wait ${spanFutex / 1e6} ms`);
    // Blocking in futex is a voluntary switch.
    assert.ok((deltas['profiler.ctx_switches.voluntary'] ?? 0) >= 1);
  });
});

function schedstat(): [number, number] {
  const [on, rq] = readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ').map(Number);
  return [on ?? 0, rq ?? 0];
}

test('a CPU burn shows ~0 off-CPU on the main thread', { skip: !linux }, async () => {
  await withSignals((rs) => {
    rs.collectWindow(now(), now());
    const [on0, rq0] = schedstat();
    const t0 = process.hrtime.bigint();
    const end = Date.now() + 200;
    let x = 0;
    while (Date.now() < end) x++;
    assert.ok(x > 0);
    const wallNs = Number(process.hrtime.bigint() - t0);
    const [on1, rq1] = schedstat();
    const w = rs.collectWindow(now(), now());
    const byReason = offCpuByReason(w.offCpu, process.pid);
    const total = [...byReason.values()].reduce((a, b) => a + b, 0);
    // What the kernel says this thread was neither running nor runnable for
    // (on a shared, overloaded machine a burn can be interrupted, e.g. to
    // wait for GC helpers in futex): the sampler must not report more.
    const trulyOffNs = Math.max(0, wallNs - (on1 - on0) - (rq1 - rq0));
    assert.ok(trulyOffNs < 0.5 * wallNs, `the burn mostly ran (${trulyOffNs / 1e6} ms off)`);
    assert.ok(
      total < trulyOffNs + 25e6,
      `off-CPU during a burn: ${total / 1e6} ms, kernel says ${trulyOffNs / 1e6} ms ${JSON.stringify([...byReason])}`,
    );
    return Promise.resolve();
  });
});

const libc = loadLibc();
const PLANTED_COUNT = 0xabcde; // a read(2) length, the third syscall argument

test('a blocking FIFO read shows as read off-CPU; its syscall arguments appear in no output', { skip: !linux || !libc.ok }, async () => {
  if (!libc.ok) return;
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-fifo-'));
  const fifo = join(dir, 'f');
  assert.equal(libc.libc.mkfifo(fifo, 0o600), 0);
  try {
    await withSignals(async (rs) => {
      const fd = openSync(fifo, constants.O_RDWR);
      // The writer is a separate process so this thread can block for real.
      const child = spawn(process.execPath, ['-e', `setTimeout(() => require('fs').writeFileSync(${JSON.stringify(fifo)}, 'x'), 200)`]);
      const exited = new Promise((r) => child.once('exit', r));
      await new Promise((r) => child.once('spawn', r));
      rs.collectWindow(now(), now());
      const buf = Buffer.alloc(PLANTED_COUNT);
      const t0 = process.hrtime.bigint();
      const n = readSync(fd, buf, 0, PLANTED_COUNT, null);
      const blockedNs = Number(process.hrtime.bigint() - t0);
      assert.equal(n, 1);
      closeSync(fd);
      await new Promise((r) => setTimeout(r, 30));
      const w = rs.collectWindow(now(), now());
      await exited;
      const read = offCpuByReason(w.offCpu, process.pid).get('read') ?? 0;
      // The child needs a moment to start, so compare with the measured block.
      assert.ok(blockedNs > 150e6);
      assert.ok(read > 0.7 * blockedNs && read < 1.3 * blockedNs + 30e6, `read off-CPU ${read / 1e6} ms of ${blockedNs / 1e6} ms`);

      // Everything this stage outputs: the encoded profile, attributes, stats,
      // and the shared table itself.
      assert.ok(w.offCpu);
      const encoded = Buffer.from(w.offCpu.encode()).toString('latin1');
      const text = [encoded, JSON.stringify(w.attributes), JSON.stringify(rs.stats()), JSON.stringify(frames(w.offCpu))].join('\n');
      for (const needle of [PLANTED_COUNT.toString(16), String(PLANTED_COUNT)]) {
        assert.equal(text.toLowerCase().includes(needle), false, `found planted ${needle}`);
      }
      // No 64-bit little-endian copy of the planted value anywhere in the encoded profile.
      const le = Buffer.alloc(4);
      le.writeUInt32LE(PLANTED_COUNT);
      assert.equal(Buffer.from(w.offCpu.encode()).includes(le), false);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("threadStateHost 'main': no extra thread; other threads' reasons seen, this thread's off-CPU measured as unobserved", { skip: !linux }, async () => {
  const problems = new Problems();
  // 'all': the blocker is not a spanfuse-named worker (w<id>:<name>), so 'app' would skip it.
  const c = parseRuntimeConfig({ SPANFUSE_THREAD_STATE_HOST: 'main' }, problems, { threadStateHz: 100, threadStateThreads: 'all' });
  assert.deepEqual(problems.list, []);
  assert.equal(c.threadStateHost, 'main');
  const threadsBefore = readdirSync('/proc/self/task').length;
  const rs = new RuntimeSignals(c, new Diagnostics(() => undefined));
  await rs.start();
  // A worker that blocks in futex for 200 ms: another thread, so its reason is seen.
  const worker = new Worker(
    `const { parentPort } = require('node:worker_threads');
     parentPort.once('message', () => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200); parentPort.postMessage('done'); });
     setInterval(() => {}, 1000); // stays alive (and tracked) until terminated
     parentPort.postMessage(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());`,
    { eval: true, name: 'blocker' },
  );
  try {
    assert.equal(rs.stats().threadState?.host, 'main');
    assert.equal(rs.stats().threadState?.samplerTid, 0, 'no sampler thread');
    const workerTid = Number(await once(worker, 'message').then(([m]) => m as string));
    assert.ok(readdirSync('/proc/self/task').length - threadsBefore >= 1, 'the blocker worker runs');
    // A refresh (about once a second) picks up the worker's thread.
    for (let i = 0; i < 60 && rs.threadTotals(workerTid) === undefined; i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(rs.threadTotals(workerTid) !== undefined, 'the worker thread is tracked');
    rs.collectWindow(now(), now());
    const counters = rs.spanCounters();
    const token = counters.begin();
    // This thread blocks 200 ms: no timer pass can run; the span's end runs the overdue one.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    const deltas = counters.end(token);
    assert.equal('profiler.futex.wait_ns' in deltas, false, `this thread's futex time is unknown, not 0: ${JSON.stringify(deltas)}`);
    assert.equal(typeof deltas['profiler.runqueue.delay_ns'], 'number', 'measured figures still come from the forced pass');
    assert.ok((deltas['profiler.ctx_switches.voluntary'] ?? 0) >= 1, JSON.stringify(deltas));
    worker.postMessage('go');
    await once(worker, 'message');
    await new Promise((r) => setTimeout(r, 50));
    const w = rs.collectWindow(now(), now());
    assert.equal(w.attributes['runtime.thread_state.host'], 'main');
    assert.equal(w.attributes['runtime.thread_state.idle_every'], 4);
    const mine = offCpuByReason(w.offCpu, process.pid);
    const unobserved = mine.get('unobserved') ?? 0;
    assert.ok(unobserved > 140e6, `this thread's 200 ms wait as unobserved off-CPU: ${JSON.stringify([...mine])}`);
    assert.equal(mine.get('futex'), undefined, 'never a reason it cannot see');
    const theirs = offCpuByReason(w.offCpu, workerTid);
    const futex = theirs.get('futex') ?? 0;
    assert.ok(futex > 140e6 && futex < 400e6, `the worker's futex off-CPU ${futex / 1e6} ms ${JSON.stringify([...theirs])}`);
  } finally {
    await worker.terminate();
    await rs.stop();
  }
});
