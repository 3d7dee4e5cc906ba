import { test } from 'node:test';
import assert from 'node:assert/strict';
import { time } from '@datadog/pprof';
import { FRAME_GARBAGE_COLLECTION } from '../../src/core/index.js';
import { gcTotalsSteps } from '../../src/heap/index.js';
import { runSync } from '../../src/core/slices.js';
import { labelOf, stackNames } from './profile-helpers.js';

// The evidence `profiler.gc.time_ns` is computed from: GC samples in the wall
// profile carry the span that was running when V8 collected.

function allocateHard(ms: number): number {
  const end = Date.now() + ms;
  const keep: unknown[][] = [];
  let n = 0;
  while (Date.now() < end) {
    const a = new Array<unknown>(1000);
    for (let i = 0; i < 1000; i++) a[i] = { i, s: `x${i}` };
    keep.push(a);
    if (keep.length > 200) keep.splice(0, 100); // survivors: old-space GCs too
    n++;
  }
  return n + keep.length;
}

function smallIntegers(ms: number): number {
  const end = Date.now() + ms;
  let x = 0;
  while (Date.now() < end) for (let k = 0; k < 10_000; k++) x = (x + k * k) % 1000003;
  return x;
}

void test('a span forcing allocations and GC gets GC samples; a span on small integers about none', () => {
  time.start({ intervalMicros: 1000, withContexts: true, collectCpuTime: false, lineNumbers: false });
  for (let round = 0; round < 4; round++) {
    time.setContext({ span_id: 'alloc-span' });
    allocateHard(150);
    time.setContext({ span_id: 'int-span' });
    smallIntegers(150);
    time.setContext(undefined);
  }
  const wall = time.stop(false, ({ context }) => {
    const c = context?.context as { span_id?: string } | undefined;
    return c?.span_id !== undefined ? { span_id: c.span_id } : {};
  });

  const perSpan = new Map<string, { gc: number; all: number }>();
  for (const s of wall.sample) {
    const span = labelOf(wall, s, 'span_id') ?? '(none)';
    const e = perSpan.get(span) ?? { gc: 0, all: 0 };
    const n = Number(s.value[0] ?? 0);
    e.all += n;
    if (stackNames(wall, s.locationId)[0] === FRAME_GARBAGE_COLLECTION) e.gc += n;
    perSpan.set(span, e);
  }
  const a = perSpan.get('alloc-span');
  const b = perSpan.get('int-span');
  const report = JSON.stringify(Object.fromEntries(perSpan));
  assert.ok(a && b, report);
  assert.ok(a.gc >= 5, `allocating span GC samples: ${report}`);
  assert.ok(a.gc / a.all >= 0.1, `allocating span GC share: ${report}`);
  // A collection started by the allocating span may finish just after the
  // switch (V8 finalizes concurrent marking on the main thread): a little
  // spill-over, not GC caused by integer work.
  assert.ok(b.gc / b.all <= 0.05, `integer span GC share: ${report}`);
  assert.ok(b.gc * 10 <= a.gc, `integer span vs allocating span: ${report}`);

  // The window total counts the same samples.
  const totals = runSync(gcTotalsSteps(wall));
  const gcAll = [...perSpan.values()].reduce((x, e) => x + e.gc, 0);
  assert.equal(totals.samples, gcAll);
  assert.ok(totals.wallNs > 0);
});
