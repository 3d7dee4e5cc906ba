import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Problems } from '../../src/config/env.js';
import { DEFAULT_HEAP_INTERVAL_BYTES, DEFAULT_HEAP_STACK_DEPTH, resolveHeapConfig } from '../../src/config/heap.js';

void test('defaults: off (measured cost, see docs/memory.md), 512 KiB, depth 64, in-use only', () => {
  const problems = new Problems();
  const c = resolveHeapConfig(undefined, {}, problems);
  assert.deepEqual(c, { enabled: false, intervalBytes: 512 * 1024, stackDepth: 64, allocations: false });
  assert.equal(DEFAULT_HEAP_INTERVAL_BYTES, 512 * 1024);
  assert.equal(DEFAULT_HEAP_STACK_DEPTH, 64);
  assert.deepEqual(problems.list, []);
});

void test('env is read when code sets nothing', () => {
  const problems = new Problems();
  const c = resolveHeapConfig(
    undefined,
    {
      SPANFUSE_HEAP_ENABLED: 'on',
      SPANFUSE_HEAP_INTERVAL_BYTES: '131072',
      SPANFUSE_HEAP_STACK_DEPTH: ' 32 ',
      SPANFUSE_HEAP_ALLOCATIONS: 'yes',
    },
    problems,
  );
  assert.deepEqual(c, { enabled: true, intervalBytes: 131072, stackDepth: 32, allocations: true });
  assert.deepEqual(problems.list, []);
});

void test('code wins over env; falsy code values are honoured', () => {
  const problems = new Problems();
  const c = resolveHeapConfig(
    { enabled: false, intervalBytes: 1048576, allocations: false },
    { SPANFUSE_HEAP_ENABLED: 'true', SPANFUSE_HEAP_INTERVAL_BYTES: '4096', SPANFUSE_HEAP_ALLOCATIONS: 'true' },
    problems,
  );
  assert.equal(c.enabled, false);
  assert.equal(c.intervalBytes, 1048576);
  assert.equal(c.allocations, false);
  assert.deepEqual(problems.list, []);
});

void test('bad env and bad code values are each reported with their field, never thrown', () => {
  const problems = new Problems();
  const c = resolveHeapConfig(
    { stackDepth: 0, intervalBytes: Number.NaN },
    { SPANFUSE_HEAP_ENABLED: 'maybe', SPANFUSE_HEAP_INTERVAL_BYTES: '12k', SPANFUSE_HEAP_ALLOCATIONS: '2' },
    problems,
  );
  const fields = problems.list.map((p) => p.field).sort();
  assert.deepEqual(fields, [
    'SPANFUSE_HEAP_ALLOCATIONS',
    'SPANFUSE_HEAP_ENABLED',
    'heap.intervalBytes',
    'heap.stackDepth',
  ]);
  // A usable config still comes back (the top-level resolver throws once).
  assert.equal(c.intervalBytes, DEFAULT_HEAP_INTERVAL_BYTES);
  assert.equal(c.stackDepth, DEFAULT_HEAP_STACK_DEPTH);
  assert.match(problems.list.find((p) => p.field === 'heap.stackDepth')?.message ?? '', /1 to 1024/);
});

void test('env values out of range are reported', () => {
  const problems = new Problems();
  resolveHeapConfig(undefined, { SPANFUSE_HEAP_INTERVAL_BYTES: '10', SPANFUSE_HEAP_STACK_DEPTH: '5000' }, problems);
  assert.deepEqual(
    problems.list.map((p) => p.field),
    ['SPANFUSE_HEAP_INTERVAL_BYTES', 'SPANFUSE_HEAP_STACK_DEPTH'],
  );
});
