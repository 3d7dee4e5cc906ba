import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  attributeAllocations,
  estimateSpanAllocations,
  gcTotalsSteps,
  labelHeapSamples,
  NO_SPAN,
  UNATTRIBUTED,
} from '../../src/heap/index.js';
import { allocProfile, builtin, js, wallProfile } from './hand-profiles.js';
import { labelOf } from './profile-helpers.js';
import { runSync, STEP_ENTRIES } from '../../src/core/slices.js';
import { drainSteps } from '../support/steps.js';

const ROOT = [js('parserOnIncoming'), js('emit')];
const byOp = (ops: ReturnType<typeof attributeAllocations>): Record<string, number> =>
  Object.fromEntries(ops.map((o) => [o.operation, o.bytes]));

void test('a stack only one operation runs goes wholly to it; shared code is split by wall time', () => {
  const wall = wallProfile([
    { stack: [...ROOT, js('handleA'), js('buildRows')], op: 'A', span: 'a1', n: 30 },
    { stack: [...ROOT, js('handleB'), js('buildRows')], op: 'B', span: 'b1', n: 10 },
    { stack: [...ROOT, js('handleA'), js('sharedUtil')], op: 'A', span: 'a1', n: 3 },
    { stack: [...ROOT, js('handleB'), js('sharedUtil')], op: 'B', span: 'b2', n: 1 },
  ]);
  const heap = allocProfile([
    // Same helper, told apart by the caller frame.
    { stack: [...ROOT, js('handleA'), js('buildRows')], bytes: 9000 },
    { stack: [...ROOT, js('handleB'), js('buildRows')], bytes: 1000 },
    // Allocated in `emit` itself: A and B both ran below it, 33:11.
    { stack: [...ROOT], bytes: 4400 },
  ]);
  const ops = attributeAllocations(heap, wall);
  assert.deepEqual(byOp(ops), { A: 9000 + 3300, B: 1000 + 1100 });
  const a = ops.find((o) => o.operation === 'A');
  assert.equal(a?.exactBytes, 9000);
  assert.ok(Math.abs((a?.share ?? 0) - 12300 / 14400) < 1e-12);
  assert.deepEqual(
    ops.map((o) => o.operation),
    ['A', 'B'],
    'largest first',
  );
});

void test('the match stops at the first frame the wall never saw with the path so far', () => {
  const wall = wallProfile([
    { stack: [...ROOT, js('handleA'), js('sharedUtil')], op: 'A', n: 10 },
    { stack: [...ROOT, js('handleB')], op: 'B', n: 10 },
  ]);
  // handleB -> sharedUtil was never wall-sampled: sharedUtil alone would point
  // at A; the honest answer is "under handleB", i.e. B.
  const heap = allocProfile([{ stack: [...ROOT, js('handleB'), js('sharedUtil')], bytes: 500 }]);
  assert.deepEqual(byOp(attributeAllocations(heap, wall)), { B: 500 });
  // A frame no wall sample has at all stops the walk too: below ROOT, both.
  const heap2 = allocProfile([{ stack: [...ROOT, js('handleC'), js('sharedUtil')], bytes: 400 }]);
  assert.deepEqual(byOp(attributeAllocations(heap2, wall)), { A: 200, B: 200 });
});

void test('builtins without a script are skipped; anonymous frames match with or without column', () => {
  const wall = wallProfile([
    { stack: [js('(anonymous:L#57:C#33)'), builtin('runMicrotasks'), js('handleA')], op: 'A', n: 5 },
    { stack: [js('(anonymous:L#90:C#3)'), js('handleB')], op: 'B', n: 5 },
  ]);
  const heap = allocProfile([
    { stack: [js('(anonymous:L#57)'), builtin('(anonymous)'), js('handleA')], bytes: 100 },
    { stack: [js('(anonymous:L#90)'), js('handleB')], bytes: 10 },
  ]);
  assert.deepEqual(byOp(attributeAllocations(heap, wall)), { A: 100, B: 10 });
});

void test('allocations with nothing in common with the wall are unattributed; outside spans is its own bucket', () => {
  const wall = wallProfile([
    { stack: [js('timerTick'), js('flushMetrics')], n: 4 },
    { stack: [...ROOT, js('handleA')], op: 'A', n: 4 },
  ]);
  const heap = allocProfile([
    { stack: [js('startup'), js('loadConfig')], bytes: 700 },
    { stack: [js('timerTick'), js('flushMetrics')], bytes: 300 },
  ]);
  const ops = attributeAllocations(heap, wall);
  assert.deepEqual(byOp(ops), { [UNATTRIBUTED]: 700, [NO_SPAN]: 300 });
  assert.deepEqual(attributeAllocations(allocProfile([]), wall), []);
});

void test('labels: operation where unambiguous, span id only where one span holds the stack', () => {
  const wall = wallProfile([
    { stack: [...ROOT, js('handleA')], op: 'A', span: 'a1', n: 20 },
    { stack: [...ROOT, js('handleA'), js('parse')], op: 'A', span: 'a2', n: 10 },
    { stack: [...ROOT, js('handleA'), js('parse')], op: 'A', span: 'a3', n: 10 },
    { stack: [...ROOT, js('handleB'), js('leaky')], op: 'B', span: 'b1', n: 5 },
    { stack: [...ROOT, js('handleB')], op: 'B', span: 'b2', n: 5 },
    { stack: [js('timerTick')], n: 5 },
  ]);
  const heap = allocProfile([
    { stack: [...ROOT, js('handleA'), js('parse')], bytes: 1 },
    { stack: [...ROOT, js('handleB'), js('leaky')], bytes: 2 },
    { stack: [...ROOT], bytes: 3 },
    { stack: [js('timerTick')], bytes: 4 },
  ]);
  const r = labelHeapSamples(heap, wall);
  assert.deepEqual(r, { samples: 4, labelledOperation: 2, labelledSpan: 1 });
  const labels = heap.sample.map((s) => [labelOf(heap, s, 'operation'), labelOf(heap, s, 'span_id')]);
  assert.deepEqual(labels, [
    ['A', undefined],
    ['B', 'b1'],
    [undefined, undefined],
    [undefined, undefined],
  ]);
  // Idempotent: a second pass adds nothing.
  assert.deepEqual(labelHeapSamples(heap, wall), { samples: 4, labelledOperation: 0, labelledSpan: 0 });
});

void test('gcTotalsSteps counts wall samples whose leaf is Garbage Collection', () => {
  const wall = wallProfile([
    { stack: [builtin('Node.js'), builtin('Garbage Collection')], op: 'A', n: 3 },
    { stack: [...ROOT, js('handleA')], op: 'A', n: 7 },
    { stack: [builtin('Garbage Collection'), js('notALeaf')], n: 100 },
  ]);
  const g = runSync(gcTotalsSteps(wall));
  assert.equal(g.samples, 3);
  assert.equal(g.wallNs, 30_000_000);
  assert.ok(Math.abs(g.share - 3 / 110) < 1e-12);
});

void test('gcTotalsSteps: a large window yields between slices and ends with the same totals', () => {
  const specs = [];
  for (let i = 0; i < 10 * STEP_ENTRIES; i++) {
    specs.push(i % 5 === 0 ? { stack: [builtin('Node.js'), builtin('Garbage Collection')], n: 1 } : { stack: [...ROOT, js(`handle${i % 7}`)], n: 1 });
  }
  const wall = wallProfile(specs);
  const { yields, value } = drainSteps(gcTotalsSteps(wall));
  assert.ok(yields >= 9, `yielded ${yields} times for ${specs.length} samples`);
  assert.deepEqual(value, runSync(gcTotalsSteps(wall)));
  assert.equal(value.samples, (10 * STEP_ENTRIES) / 5);
});

void test('per-span estimate: split by each span’s wall samples in the allocating code, exact when one span ran it', () => {
  const wall = wallProfile([
    { stack: [...ROOT, js('handleA'), js('build')], op: 'A', span: 'slow', n: 30 },
    { stack: [...ROOT, js('handleA'), js('build')], op: 'A', span: 'fast', n: 10 },
    { stack: [...ROOT, js('handleA'), js('rareBranch')], op: 'A', span: 'slow', n: 2 },
  ]);
  const heap = allocProfile([
    { stack: [...ROOT, js('handleA'), js('build')], bytes: 4000 },
    { stack: [...ROOT, js('handleA'), js('rareBranch')], bytes: 500 },
  ]);
  const est = estimateSpanAllocations(heap, wall);
  assert.deepEqual(Object.fromEntries(est), {
    slow: { bytes: 3000 + 500, exactBytes: 500 },
    fast: { bytes: 1000, exactBytes: 0 },
  });
  assert.deepEqual([...estimateSpanAllocations(heap, wall, new Set(['fast'])).keys()], ['fast']);
});

void test('the native profile’s (external) gauge is not attributed', () => {
  const wall = wallProfile([{ stack: [...ROOT, js('handleA')], op: 'A', n: 4 }]);
  const heap = allocProfile([
    { stack: [builtin('(external)')], bytes: 1_000_000 },
    { stack: [...ROOT, js('handleA')], bytes: 100 },
  ]);
  assert.deepEqual(
    attributeAllocations(heap, wall).map((o) => [o.operation, o.bytes, o.share]),
    [['A', 100, 1]],
  );
});
