import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ThreadStateLoop } from '../../src/runtime/thread-state-loop.js';
import { StateReader } from '../../src/runtime/state-reader.js';
import { NR_UNOBSERVED, createStateViews, decodeReasonKey, wchanName } from '../../src/runtime/state-table.js';

// A fake /proc/self with regular files in the kernel's formats: the syscall
// line carries recognisable argument, stack pointer and program counter values.
const ARG = '0xabcde123';
const SP = '0x7ffd5a5a5a5a';
const PC = '0x7f1234567890';

function fakeProc(): string {
  const root = mkdtempSync(join(tmpdir(), 'spanfuse-fakeproc-'));
  const thread = (tid: number, syscall: string, wchan: string, comm: string, schedstat = true): void => {
    const d = join(root, 'task', String(tid));
    mkdirSync(d, { recursive: true });
    writeFileSync(join(d, 'syscall'), syscall);
    writeFileSync(join(d, 'wchan'), wchan);
    writeFileSync(join(d, 'comm'), `${comm}\n`);
    if (schedstat) writeFileSync(join(d, 'schedstat'), '123456789 4242 17\n');
  };
  thread(100, `202 ${ARG} 0x80 0x0 0x0 0x0 0x0 ${SP} ${PC}\n`, 'futex_do_wait', 'node'); // main, in futex
  thread(101, 'running\n', '0', 'node'); // on CPU
  thread(102, `-1 ${SP} ${PC}\n`, '0', 'node', false); // off CPU outside a syscall; no schedstat (sampled)
  thread(103, `0 0x14 ${ARG} 0xabcde 0x0 0x0 0x0 ${SP} ${PC}\n`, 'pipe_read', 'w1:io'); // worker, in read
  return root;
}

test('the sampling loop keeps syscall numbers and wait channels, never arguments, SP or PC', () => {
  const root = fakeProc();
  try {
    const views = createStateViews(10_000);
    const loop = new ThreadStateLoop(views, { procSelf: root, pid: 100, selfTid: -1, futexNrs: [202], refreshEvery: 1, wchanEvery: 1 });
    loop.pass(); // tracks the threads; nothing to account yet
    const t0 = Date.now();
    while (Date.now() - t0 < 5) {
      // let time pass between the two passes
    }
    // The running thread ran the whole time; the others were not scheduled.
    writeFileSync(join(root, 'task', '101', 'schedstat'), '10123456789 4242 18\n');
    loop.pass();
    loop.close();
    const reader = new StateReader(views);
    const snap = reader.snapshot();
    assert.deepEqual([...snap.keys()].sort(), [100, 101, 102, 103]);
    assert.ok((reader.futexNs(100) ?? 0) > 0);
    assert.equal(reader.offCpuNs(101), 0, 'running thread is on CPU');
    assert.ok((reader.offCpuNs(102) ?? 0) > 0);
    assert.equal(reader.futexNs(103), 0);
    assert.equal(reader.runqueueNs(100), 4242, 'schedstat read for the main thread');
    assert.equal(reader.runqueueNs(103), 4242, 'and for a worker');
    assert.equal(reader.runqueueNs(102), undefined, 'no schedstat, no run-queue figure');
    const reasons = (tid: number) =>
      [...(snap.get(tid)?.reasons.keys() ?? [])].map((k) => {
        const r = decodeReasonKey(k);
        return `${r.syscallNr}:${wchanName(views, r.wchanId) ?? ''}`;
      });
    assert.deepEqual(reasons(100), ['202:futex_do_wait']);
    assert.deepEqual(reasons(103), ['0:pipe_read']);
    assert.deepEqual(reasons(102), ['-1:']);

    // The whole shared table, as text and as raw bytes, holds none of it.
    const bytes = Buffer.from(new Uint8Array(views.sab));
    const text = bytes.toString('latin1');
    for (const hex of [ARG, SP, PC]) {
      assert.equal(text.includes(hex), false);
      assert.equal(text.includes(hex.slice(2)), false);
      const v = BigInt(hex);
      const le = Buffer.alloc(8);
      le.writeBigUInt64LE(v);
      assert.equal(bytes.includes(le.subarray(0, v > 0xffffffffn ? 6 : 4)), false, `binary ${hex}`);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('the thread running the passes (hostTid) is measured, never read for a reason: unobserved off-CPU, unknown futex', () => {
  const root = fakeProc();
  try {
    // The host has no syscall or wchan file here: the loop must not need them.
    rmSync(join(root, 'task', '100', 'syscall'));
    rmSync(join(root, 'task', '100', 'wchan'));
    writeFileSync(join(root, 'task', '100', 'status'), 'voluntary_ctxt_switches:\t5\nnonvoluntary_ctxt_switches:\t1\n');
    const views = createStateViews(10_000);
    const loop = new ThreadStateLoop(views, { procSelf: root, pid: 100, selfTid: -1, hostTid: 100, futexNrs: [202], refreshEvery: 1, wchanEvery: 1 });
    loop.pass();
    const t0 = Date.now();
    while (Date.now() - t0 < 5) {
      // time passes; the host's schedstat does not move: it was off-CPU
    }
    writeFileSync(join(root, 'task', '100', 'status'), 'voluntary_ctxt_switches:\t9\nnonvoluntary_ctxt_switches:\t1\n');
    loop.pass();
    loop.close();
    const reader = new StateReader(views);
    const snap = reader.snapshot();
    assert.ok(snap.has(100), 'the host is tracked');
    assert.ok((reader.offCpuNs(100) ?? 0) >= 4e6, `off-CPU measured: ${reader.offCpuNs(100)}`);
    assert.ok(Number.isNaN(reader.futexNs(100)), 'futex unknown, not 0');
    const keys = [...(snap.get(100)?.reasons.keys() ?? [])].map((k) => decodeReasonKey(k).syscallNr);
    assert.deepEqual(keys, [NR_UNOBSERVED]);
    // The other threads are read as before.
    assert.ok((reader.futexNs(103) ?? -1) === 0 && (reader.offCpuNs(103) ?? 0) > 0);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('with hostCounters the host publishes its own switches and faults and never opens /proc status or stat', () => {
  const root = fakeProc();
  try {
    // The worker (103) has its status and stat; the host (100) has none, so
    // opening them counts errors (as it does without hostCounters). Thread
    // 102 has no schedstat (another error): not wanted here.
    rmSync(join(root, 'task', '102'), { recursive: true });
    writeFileSync(join(root, 'task', '103', 'status'), 'voluntary_ctxt_switches:\t3\nnonvoluntary_ctxt_switches:\t0\n');
    writeFileSync(join(root, 'task', '103', 'stat'), '103 (w1:io) S 1 1 1 0 -1 0 12 0 1 0 0 0\n');
    const opts = { procSelf: root, pid: 100, selfTid: -1, hostTid: 100, futexNrs: [202], refreshEvery: 1, wchanEvery: 1 };
    const without = new ThreadStateLoop(createStateViews(10_000), opts);
    without.pass();
    without.close();
    assert.ok(without.errors > 0, 'without hostCounters the host is read from /proc');
    const views = createStateViews(10_000);
    let calls = 0;
    const counters = [7, 2, 30, 1];
    const loop = new ThreadStateLoop(views, {
      ...opts,
      hostCounters: (out) => {
        calls++;
        out.set(counters);
        return true;
      },
    });
    loop.pass();
    counters[0] = 11;
    counters[2] = 35;
    loop.pass();
    assert.equal(loop.errors, 0, 'no /proc file of the host was opened or read');
    loop.close();
    assert.equal(calls, 2, 'one read per pass');
    const reader = new StateReader(views);
    const out = new Float64Array(8).fill(-1);
    assert.ok(reader.spanSnapshot(100, out, 0, true, 4));
    assert.deepEqual([...out.subarray(4, 7)], [11, 2, 36], 'voluntary, involuntary, minor + major faults as of the last pass');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('an idle threadpool thread is visited every idleEvery passes, with its whole wait accounted; JS threads and a woken thread at every pass', () => {
  const root = fakeProc();
  // Waits until the clock moves, so every pass has time to account.
  const later = (): void => {
    const t0 = process.hrtime.bigint();
    while (process.hrtime.bigint() - t0 < 2_000_000n);
  };
  try {
    // 104: a libuv threadpool thread waiting in futex. 103: a worker (a JS
    // thread, with status and stat) waiting in read. Each pass writes a new
    // run-queue total (the timeslice count stays: neither is scheduled) and
    // the table shows which pass a thread was last read at.
    rmSync(join(root, 'task', '102'), { recursive: true });
    const pool = join(root, 'task', '104');
    mkdirSync(pool);
    writeFileSync(join(pool, 'syscall'), `202 ${ARG} 0x80 0x0 0x0 0x0 0x0 ${SP} ${PC}\n`);
    writeFileSync(join(pool, 'wchan'), 'futex_do_wait');
    writeFileSync(join(pool, 'comm'), 'libuv-worker\n');
    writeFileSync(join(root, 'task', '103', 'status'), 'voluntary_ctxt_switches:\t3\nnonvoluntary_ctxt_switches:\t0\n');
    writeFileSync(join(root, 'task', '103', 'stat'), '103 (w1:io) S 1 1 1 0 -1 0 12 0 1 0 0 0\n');
    writeFileSync(join(root, 'task', '100', 'status'), 'voluntary_ctxt_switches:\t5\nnonvoluntary_ctxt_switches:\t1\n');
    writeFileSync(join(root, 'task', '100', 'stat'), '100 (node) S 1 1 1 0 -1 0 12 0 1 0 0 0\n');
    const run = (idleEvery: number | undefined, passes: number, wakeAt = Infinity) => {
      const views = createStateViews(10_000);
      const loop = new ThreadStateLoop(views, {
        procSelf: root,
        pid: 100,
        selfTid: -1,
        futexNrs: [202],
        refreshEvery: 1000,
        wchanEvery: 1000,
        threads: 'app',
        ...(idleEvery === undefined ? {} : { idleEvery }),
      });
      const reader = new StateReader(views);
      const seen: { pool: number; worker: number }[] = [];
      let firstPoolVisit = 0n;
      let lastPoolVisit = 0n;
      for (let i = 0; i < passes; i++) {
        // After waking it is scheduled between every two passes.
        const slices = i >= wakeAt ? 18 + i - wakeAt : 17;
        writeFileSync(join(pool, 'schedstat'), `123456789 ${1000 + i} ${slices}\n`);
        writeFileSync(join(root, 'task', '103', 'schedstat'), `123456789 ${1000 + i} 17\n`);
        const before = process.hrtime.bigint();
        loop.pass();
        const rq = reader.runqueueNs(104);
        if (rq === 1000 + i) {
          if (firstPoolVisit === 0n) firstPoolVisit = before;
          lastPoolVisit = process.hrtime.bigint();
        }
        seen.push({ pool: rq ?? -1, worker: reader.runqueueNs(103) ?? -1 });
        later();
      }
      const result = { seen, skips: loop.idleSkips, offCpu: reader.offCpuNs(104) ?? 0, span: Number(lastPoolVisit - firstPoolVisit), errors: loop.errors };
      loop.close();
      return result;
    };
    const visitedAt = (seen: { pool: number }[]): number[] => seen.flatMap((s, i) => (s.pool === 1000 + i ? [i] : []));

    // The loop's own default: every thread at every pass.
    const every = run(undefined, 16);
    assert.deepEqual(visitedAt(every.seen), [...Array(16).keys()]);
    assert.equal(every.skips, 0);

    // idleEvery 4: visited at every pass until found idle IDLE_AFTER (3)
    // visits in a row (passes 1-3), then one pass in four.
    const idle = run(4, 16);
    assert.equal(idle.errors, 0);
    const visits = visitedAt(idle.seen);
    assert.deepEqual(visits.slice(0, 4), [0, 1, 2, 3]);
    const gaps = visits.slice(4).map((v, i) => v - (visits[3 + i] as number));
    assert.ok(gaps.length >= 2 && gaps.every((g) => g >= 1 && g <= 4), `visits ${visits.join(',')}`);
    assert.ok(gaps.slice(1).every((g) => g === 4), `one pass in four once idle: ${visits.join(',')}`);
    assert.equal(idle.skips, 16 - visits.length);
    // The worker, a JS thread, was read at every pass.
    assert.ok(idle.seen.every((s, i) => s.worker === 1000 + i));
    // Off-CPU from its first visit to its last is all accounted (the run-queue
    // growth, a few ns, aside): nothing is lost over the longer intervals.
    assert.ok(idle.offCpu > 0.8 * idle.span && idle.offCpu <= idle.span, `off-CPU ${idle.offCpu} ns over ${idle.span} ns`);

    // Working again from pass 8 (its timeslice count moves): seen at its
    // next visit (pass 8-11), then visited at every pass.
    const woke = run(4, 16, 8);
    const after = visitedAt(woke.seen).filter((v) => v >= 8);
    assert.ok((after[0] ?? 99) <= 11 && after.length === 16 - (after[0] ?? 99) && after.every((v, i) => i === 0 || v === (after[i - 1] as number) + 1), `visits after waking ${after.join(',')}`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
