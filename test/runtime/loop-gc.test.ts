import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LoopGcMonitor } from '../../src/runtime/loop-gc.js';

test('a 120 ms synchronous block shows as event-loop delay; GC pauses are counted', async () => {
  const m = new LoopGcMonitor(10);
  m.start();
  try {
    await new Promise((r) => setTimeout(r, 50));
    m.collectWindow();
    const before = m.cumulativeDelayNs();
    const end = Date.now() + 120;
    while (Date.now() < end) {
      // block the loop
    }
    // The timer fires late once the loop is free again.
    await new Promise((r) => setTimeout(r, 40));
    const delta = m.cumulativeDelayNs() - before;
    // The upper bound catches gross over-counting only: on a busy machine the
    // 40 ms timer itself can fire hundreds of ms late, and that lateness is real delay.
    assert.ok(delta > 80e6 && delta < 1500e6, `delay ${delta / 1e6} ms`);
    const globalGc = (globalThis as { gc?: () => void }).gc;
    // Allocate enough to trigger at least one scavenge.
    let keep: unknown[] = [];
    for (let i = 0; i < 200_000; i++) keep.push({ i });
    keep = [];
    globalGc?.();
    await new Promise((r) => setTimeout(r, 20));
    const w = m.collectWindow();
    assert.ok(Number(w['runtime.eventloop.delay.max_ns']) > 80e6);
    assert.ok(Number(w['runtime.eventloop.delay.total_ns']) >= Number(w['runtime.eventloop.delay.max_ns']));
    assert.ok(Number(w['runtime.gc.count']) >= 1, 'a GC happened');
    assert.ok(Number(w['runtime.gc.pause.total_ns']) > 0);
    assert.equal(keep.length, 0);
  } finally {
    m.stop();
  }
});

test('an idle thread backs the timer off; a span read snaps it back and a block is still measured', async () => {
  const m = new LoopGcMonitor(10, 80);
  m.start();
  try {
    assert.equal(m.periodMs, 10);
    // Idle: 10 -> 20 -> 40 -> 80 after three quiet firings (~70 ms; a loaded machine may take longer).
    const deadline = Date.now() + 5000;
    while (m.periodMs < 80 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    assert.equal(m.periodMs, 80, 'backed off to the maximum while idle');
    const before = m.cumulativeDelayNs();
    assert.equal(m.periodMs, 10, 'a read re-arms at the busy period');
    const end = Date.now() + 120;
    while (Date.now() < end) {
      // block the loop
    }
    await new Promise((r) => setTimeout(r, 40));
    const delta = m.cumulativeDelayNs() - before;
    assert.ok(delta > 80e6, `delay ${delta / 1e6} ms`);
  } finally {
    m.stop();
  }
});
