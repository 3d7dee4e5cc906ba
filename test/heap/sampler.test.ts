import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Diagnostics } from '../../src/core/index.js';
import { startHeapSampler } from '../../src/heap/index.js';
import { stackNames, sumWhere, typeNames } from './profile-helpers.js';

// Retained on purpose: the in-use profile must show them.
const retained: unknown[] = [];

function retainManyObjects(n: number): void {
  for (let i = 0; i < n; i++) retained.push({ i, s: `item-${i}`, t: [i, i + 1] });
}

function allocateAndDrop(n: number): number {
  let x = 0;
  for (let i = 0; i < n; i++) {
    const o = { i, s: `drop-${i}`, t: [i, i + 1] };
    retained[0] = o; // defeat escape analysis; only one survives
    x += o.s.length;
  }
  return x;
}

const onStack = (fn: string) => (names: string[]) => names.includes(fn);

void test('in-use sampler: retained objects show under their allocating frame', () => {
  const d = new Diagnostics(() => undefined);
  const s = startHeapSampler({ intervalBytes: 16 * 1024, stackDepth: 64, allocations: false }, d);
  assert.ok(s, JSON.stringify(d.counters()));
  try {
    assert.equal(s.kind, 'inuse');
    assert.equal(s.backend, 'pprof');
    retainManyObjects(100_000);
    const p = s.collect();
    assert.ok(p);
    assert.deepEqual(typeNames(p), ['inuse_objects/count', 'inuse_space/bytes']);
    const mine = sumWhere(p, 'inuse_space', onStack('retainManyObjects'));
    // ~100k objects of >= 3 heap objects each, dozens of bytes: several MB.
    assert.ok(mine > 2 * 1024 * 1024, `retained bytes under retainManyObjects: ${mine}`);
    assert.ok(p.durationNanos > 0n);
    assert.equal(p.stringTable.strings[Number(p.defaultSampleType)], 'inuse_space');
    assert.ok(p.encode().length > 0);
  } finally {
    s.stop();
    s.stop();
    retained.length = 0;
  }
  assert.equal(s.collect(), undefined, 'collect after stop gives nothing');
  assert.deepEqual(d.counters(), {});
});

void test('allocation sampler: dropped objects count, and each window starts empty', () => {
  const d = new Diagnostics(() => undefined);
  const s = startHeapSampler({ intervalBytes: 16 * 1024, stackDepth: 64, allocations: true }, d);
  assert.ok(s, JSON.stringify(d.counters()));
  try {
    // Feature-tested, not version-sniffed: either the native binding does
    // live+dead (Node 26) or the inspector path does allocations only.
    assert.ok(s.kind === 'alloc' || s.kind === 'inuse+alloc', s.kind);
    s.collect(); // start a fresh window
    allocateAndDrop(200_000);
    const first = s.collect();
    assert.ok(first);
    assert.ok(typeNames(first).includes('alloc_space/bytes'));
    const dropped = sumWhere(first, 'alloc_space', onStack('allocateAndDrop'));
    assert.ok(dropped > 4 * 1024 * 1024, `allocated bytes under allocateAndDrop: ${dropped}`);
    const second = s.collect();
    assert.ok(second);
    const again = sumWhere(second, 'alloc_space', onStack('allocateAndDrop'));
    assert.ok(again < dropped / 10, `second window still holds the first window's allocations: ${again}`);
    const names = first.sample.flatMap((x) => stackNames(first, x.locationId));
    assert.ok(names.includes('allocateAndDrop'));
  } finally {
    s.stop();
    retained.length = 0;
  }
  assert.deepEqual(d.counters(), {});
});

void test('allocation mode bounds memory when nobody collects: stale windows are dropped and counted', async (t) => {
  const d = new Diagnostics(() => undefined);
  const s = startHeapSampler({ intervalBytes: 16 * 1024, stackDepth: 64, allocations: true, maxWindowMs: 50 }, d);
  assert.ok(s);
  try {
    if (s.backend !== 'inspector') {
      t.skip(`the ${s.backend} backend resets on collect only`);
      return;
    }
    allocateAndDrop(200_000);
    // Wait for the guard timer (unref'd; polled, no timing asserted).
    for (let i = 0; i < 200 && (d.counters()['heap.windows_dropped'] ?? 0) === 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok((d.counters()['heap.windows_dropped'] ?? 0) >= 1, JSON.stringify(d.counters()));
    const p = s.collect();
    assert.ok(p);
    assert.ok(sumWhere(p, 'alloc_space', onStack('allocateAndDrop')) < 1024 * 1024, 'the stale window was dropped');
  } finally {
    s.stop();
    retained.length = 0;
  }
});
