import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Problems } from '../../src/config/env.js';
import { resolveHeapConfig } from '../../src/config/heap.js';
import { Diagnostics } from '../../src/core/index.js';
import { HeapStage } from '../../src/heap/index.js';
import { runSync } from '../../src/core/slices.js';
import { labelOf } from './profile-helpers.js';
import { HEAVY_OP, startTracedService } from './traced-service.js';

void test('HeapStage fills a real window: heap profile, labels, operations and GC attributes', async () => {
  const problems = new Problems();
  const config = resolveHeapConfig(
    { intervalBytes: 64 * 1024 },
    { SPANFUSE_HEAP_ENABLED: 'true', SPANFUSE_HEAP_ALLOCATIONS: 'true' },
    problems,
  );
  assert.deepEqual(problems.list, []);
  const diagnostics = new Diagnostics(() => undefined);
  const stage = HeapStage.start(config, diagnostics);
  assert.ok(stage, JSON.stringify(diagnostics.counters()));
  const service = await startTracedService(1000);
  try {
    await service.drive(5, 2);
    runSync(stage.fillSteps(service.rotate())); // warm-up window
    await service.drive(30, 4);
    const window = service.rotate();
    runSync(stage.fillSteps(window));
    assert.ok(window.heap);
    assert.equal(window.attributes['profiler.heap.kind'], stage.sampler.kind);
    assert.equal(window.attributes['profiler.heap.interval_bytes'], 64 * 1024);
    assert.equal(typeof window.attributes['profiler.gc.time_ns'], 'number');
    assert.equal(typeof window.attributes['profiler.gc.samples'], 'number');
    const ops = JSON.parse(String(window.attributes['profiler.heap.operations'])) as { operation: string; share: number }[];
    assert.equal(ops[0]?.operation, HEAVY_OP, JSON.stringify(ops));
    assert.ok((ops[0]?.share ?? 0) >= 0.8, JSON.stringify(ops));
    const heap = window.heap;
    assert.ok(heap.sample.some((s) => labelOf(heap, s, 'operation') === HEAVY_OP));
  } finally {
    await service.close();
    stage.stop();
    stage.stop();
  }
  assert.deepEqual(diagnostics.counters(), {});
});

void test('HeapStage is absent when disabled', () => {
  const config = resolveHeapConfig({ enabled: false }, {}, new Problems());
  assert.equal(HeapStage.start(config, new Diagnostics(() => undefined)), undefined);
});
