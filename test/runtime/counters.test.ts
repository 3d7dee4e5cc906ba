import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Diagnostics } from '../../src/core/diagnostics.js';
import { Problems } from '../../src/config/env.js';
import { parseRuntimeConfig } from '../../src/config/runtime.js';
import { RuntimeSignals, ThreadCounterReader } from '../../src/runtime/index.js';
import { perfEventFdCount } from '../../src/runtime/perf-events.js';

const linux = process.platform === 'linux';

function burn(ms: number): number {
  const end = Date.now() + ms;
  let x = 0;
  while (Date.now() < end) x++;
  return x;
}

for (const useKoffi of [true, false]) {
  test(`thread counters are monotone (${useKoffi ? 'getrusage' : '/proc'})`, { skip: !linux }, async () => {
    const r = new ThreadCounterReader({ useKoffi });
    const a = r.read();
    assert.ok(a, 'counters readable');
    burn(30);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    await new Promise((res) => setTimeout(res, 5));
    const b = r.read();
    assert.ok(b);
    for (const k of ['cpuUserNs', 'cpuSystemNs', 'ctxSwitchesVoluntary', 'ctxSwitchesInvoluntary', 'minorFaults', 'majorFaults'] as const) {
      assert.ok(Number.isFinite(a[k]) && b[k] >= a[k], `${k}: ${a[k]} -> ${b[k]}`);
    }
    assert.ok(b.cpuUserNs + b.cpuSystemNs > a.cpuUserNs + a.cpuSystemNs, 'CPU time advanced');
    assert.ok(b.ctxSwitchesVoluntary > a.ctxSwitchesVoluntary, 'sleeping is a voluntary switch');
    if (a.runqueueDelayNs !== undefined && b.runqueueDelayNs !== undefined) {
      assert.ok(b.runqueueDelayNs >= a.runqueueDelayNs);
      assert.ok((b.onCpuNs ?? 0) > (a.onCpuNs ?? 0));
    }
    r.close();
  });
}

for (const [mode, host] of [['syscall', 'worker'], ['sampler', 'worker'], ['sampler', 'main']] as const) {
test(`span counters (${mode}, thread state on ${host}): present where supported, hardware ones absent with a recorded reason`, { skip: !linux }, async () => {
  const problems = new Problems();
  const rs = new RuntimeSignals(
    parseRuntimeConfig({}, problems, { spanCounters: mode, threadStateHz: 50, threadStateHost: host }),
    new Diagnostics(() => undefined),
  );
  await rs.start();
  try {
    const src = rs.spanCounters();
    const t = src.begin();
    burn(20);
    // Long enough for several sampler passes, with real sleeps. Each wait
    // outlasts a pass interval (20 ms at 50 Hz), so a pass on time lands in
    // it (10 ms waits were all missed once in CI on a loaded machine).
    for (let i = 0; i < 5; i++) {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 25);
      await new Promise((res) => setTimeout(res, 20));
    }
    const d = src.end(t);
    const present = ['profiler.ctx_switches.voluntary', 'profiler.ctx_switches.involuntary', 'profiler.page_faults', 'profiler.eventloop.delay_ns'];
    // On the main host a thread cannot see itself wait: its futex time is unknown, so absent.
    if (host === 'worker') present.push('profiler.futex.wait_ns');
    else assert.equal('profiler.futex.wait_ns' in d, false, `futex on the main host: ${d['profiler.futex.wait_ns']}`);
    for (const k of present) {
      assert.ok(typeof d[k] === 'number' && d[k] >= 0, `${k} = ${d[k]}`);
    }
    const stats = rs.stats();
    const w = rs.collectWindow(0n, 1n);
    for (const name of ['profiler.cpu.cycles', 'profiler.instructions', 'profiler.l3.misses']) {
      const reason = stats.unsupported[name];
      if (reason === undefined) {
        assert.ok(typeof d[name] === 'number', `${name} offered, so present`);
        continue;
      }
      assert.equal(name in d, false, `${name} must be absent, not ${d[name]}`);
      assert.equal(w.attributes[`profiler.unsupported.${name.slice('profiler.'.length)}`], reason);
    }
    assert.ok(typeof w.attributes['runtime.gc.count'] === 'number');
    // The main thread's own counters over the window (getrusage or /proc, no perf event).
    if (stats.counterSource !== 'none') {
      assert.ok(Number(w.attributes['runtime.main.task_clock_ns']) > 10e6, `main thread burned >10 ms in the window: ${w.attributes['runtime.main.task_clock_ns']}`);
      assert.ok(Number(w.attributes['runtime.main.context_switches']) >= 5, `its sleeps are switches: ${w.attributes['runtime.main.context_switches']}`);
      assert.ok(Number(w.attributes['runtime.main.page_faults']) >= 0);
    }
    assert.ok((d['profiler.ctx_switches.voluntary'] ?? 0) > 0, 'sleeps are voluntary switches');
    if (host === 'worker') assert.ok((d['profiler.futex.wait_ns'] ?? 0) > 0, 'Atomics.wait is a futex wait');
  } finally {
    await rs.stop();
  }
});
}

test('at defaults no perf event is opened on the main thread (each would tax its every context switch)', { skip: !linux }, async () => {
  const before = perfEventFdCount();
  const rs = new RuntimeSignals(parseRuntimeConfig({}, new Problems()), new Diagnostics(() => undefined));
  await rs.start();
  try {
    assert.equal(perfEventFdCount(), before);
    assert.deepEqual(rs.stats().perfHardware, []);
    assert.equal(rs.stats().unsupported['profiler.cpu.cycles'], 'perf events disabled by configuration');
  } finally {
    await rs.stop();
  }
});

test('runtime config: code > env > default, problems named', () => {
  const p = new Problems();
  const c = parseRuntimeConfig({ SPANFUSE_THREAD_STATE_HZ: '80', SPANFUSE_PERF_EVENTS: 'off', UV_THREADPOOL_SIZE: '8' }, p, { threadStateHz: 60 });
  assert.deepEqual(p.list, []);
  assert.equal(c.threadStateHz, 60);
  assert.equal(c.perfEvents, false);
  assert.equal(c.threadpoolSize, 8);
  assert.equal(c.threadState, true);
  assert.equal(c.threadStateHost, 'main');
  assert.equal(parseRuntimeConfig({ SPANFUSE_THREAD_STATE_HOST: 'Worker' }, p).threadStateHost, 'worker');
  assert.equal(parseRuntimeConfig({ SPANFUSE_THREAD_STATE_HOST: 'main' }, p, { threadStateHost: 'worker' }).threadStateHost, 'worker');
  assert.equal(c.threadStateIdleEvery, 4);
  assert.equal(parseRuntimeConfig({ SPANFUSE_THREAD_STATE_IDLE_EVERY: '1' }, p).threadStateIdleEvery, 1);
  assert.deepEqual(p.list, []);
  const idle = new Problems();
  assert.equal(parseRuntimeConfig({ SPANFUSE_THREAD_STATE_IDLE_EVERY: '0' }, idle).threadStateIdleEvery, 4, 'out of range: the default');
  assert.deepEqual(idle.list.map((x) => x.field), ['SPANFUSE_THREAD_STATE_IDLE_EVERY']);
  const bad = new Problems();
  parseRuntimeConfig({ SPANFUSE_THREAD_STATE_HZ: 'fast', SPANFUSE_THREAD_CONTEXT: 'maybe', SPANFUSE_THREAD_STATE_HOST: 'thread' }, bad, { threadpoolSize: 0 });
  assert.deepEqual(bad.list.map((x) => x.field).sort(), [
    'SPANFUSE_THREAD_CONTEXT',
    'SPANFUSE_THREAD_STATE_HOST',
    'SPANFUSE_THREAD_STATE_HZ',
    'runtime.threadpoolSize',
  ]);
});

test('a span with no sampler pass inside gets no sampler-derived counters (absent, not zero)', { skip: !linux }, async () => {
  const rs = new RuntimeSignals(parseRuntimeConfig({}, new Problems(), { threadStateHz: 1 }), new Diagnostics(() => undefined));
  await rs.start();
  try {
    const src = rs.spanCounters();
    const d = src.end(src.begin());
    for (const k of ['profiler.futex.wait_ns', 'profiler.runqueue.delay_ns', 'profiler.ctx_switches.voluntary', 'profiler.page_faults']) {
      assert.equal(k in d, false, `${k} = ${d[k]}`);
    }
    assert.equal(typeof d['profiler.eventloop.delay_ns'], 'number');
  } finally {
    await rs.stop();
  }
});

test('span counters from the thread-state table: one snapshot until a pass or a loop tick moves the values', { skip: !linux }, async () => {
  const rs = new RuntimeSignals(
    parseRuntimeConfig({}, new Problems(), { spanCounters: 'sampler', threadStateHz: 50, threadStateHost: 'main', perfEvents: false }),
    new Diagnostics(() => undefined),
  );
  await rs.start();
  try {
    const src = rs.spanCounters();
    const passesNow = (): number => rs.stats().threadState?.passes ?? 0;
    // Past the start-up reads (they wait for the first pass).
    for (let i = 0; i < 50 && passesNow() === 0; i++) await new Promise((res) => setTimeout(res, 10));
    await new Promise((res) => setTimeout(res, 30));
    const a = src.begin();
    const b = src.begin();
    assert.ok(a instanceof Float64Array, 'a snapshot');
    assert.equal(b, a, 'no pass and no loop tick in between: the same snapshot');
    // Later than the old 1 ms reuse, still without a loop turn: the same
    // snapshot unless a pass came due (then begin() ran it).
    const p0 = passesNow();
    burn(3);
    const b2 = src.begin();
    if (passesNow() === p0) assert.equal(b2, a, 'values unchanged 3 ms later: the same snapshot');
    const passes = passesNow();
    // Passes at 50 Hz on this thread's loop, and the loop monitor's timer.
    for (let i = 0; i < 50 && passesNow() === passes; i++) await new Promise((res) => setTimeout(res, 10));
    assert.ok(passesNow() > passes, 'a pass ran');
    const c = src.begin();
    assert.notEqual(c, a, 'a pass since: a new snapshot');
    burn(5);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 25);
    for (let i = 0; i < 3; i++) await new Promise((res) => setTimeout(res, 25));
    const d = src.end(c);
    assert.ok((d['profiler.ctx_switches.voluntary'] ?? 0) > 0, JSON.stringify(d));
    assert.equal(typeof d['profiler.eventloop.delay_ns'], 'number');
  } finally {
    await rs.stop();
  }
});
