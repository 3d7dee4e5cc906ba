import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Diagnostics } from '../../src/core/index.js';
import {
  attributeAllocations,
  estimateSpanAllocations,
  labelHeapSamples,
  LABEL_OPERATION,
  startHeapSampler,
} from '../../src/heap/index.js';
import { labelOf, stackNames, sumWhere, typeIndex } from './profile-helpers.js';
import { HEAVY_OP, LIGHT_OP, startTracedService } from './traced-service.js';

void test('two routes, one allocating ~10x: profile and per-operation figure put >= 80% on the heavy one', async () => {
  const diagnostics = new Diagnostics(() => undefined);
  const heap = startHeapSampler({ intervalBytes: 64 * 1024, stackDepth: 64, allocations: true }, diagnostics);
  assert.ok(heap, JSON.stringify(diagnostics.counters()));
  const service = await startTracedService(1000);
  try {
    await service.drive(10, 2); // warm-up window, thrown away
    service.wallProfile();
    heap.collect();

    // Enough requests that the light route, ~10% of the bytes and of the CPU,
    // always has wall samples to be matched with (with 60 it had none in one CI run).
    await service.drive(120, 4);
    const wall = service.wallProfile();
    const profile = heap.collect();
    assert.ok(profile);
    const space = typeIndex(profile, 'alloc_space') >= 0 ? 'alloc_space' : 'inuse_space';
    assert.equal(space, 'alloc_space');

    // The memory profile itself: bytes whose stack runs through each route.
    const total = sumWhere(profile, space);
    const heavyFrames = sumWhere(profile, space, (n) => n.includes('heavyRoute'));
    const lightFrames = sumWhere(profile, space, (n) => n.includes('lightRoute'));
    assert.ok(heavyFrames / total >= 0.8, `heavy frames hold ${(heavyFrames / total).toFixed(3)} of ${total} bytes`);
    assert.ok(heavyFrames > 4 * lightFrames, `heavy ${heavyFrames} vs light ${lightFrames}`);

    // The per-operation figure, from the heap and wall profiles alone.
    const ops = attributeAllocations(profile, wall);
    const heavy = ops.find((o) => o.operation === HEAVY_OP);
    const light = ops.find((o) => o.operation === LIGHT_OP);
    assert.ok(heavy, JSON.stringify(ops));
    assert.ok(light, JSON.stringify(ops));
    assert.ok(heavy.share >= 0.8, `heavy operation share ${heavy.share.toFixed(3)}: ${JSON.stringify(ops)}`);
    assert.ok(heavy.bytes > 4 * light.bytes, JSON.stringify(ops));
    const shares = ops.reduce((a, o) => a + o.share, 0);
    assert.ok(Math.abs(shares - 1) < 1e-9, `shares sum to ${shares}`);

    // Per-span estimates split the same bytes across the requests' spans.
    const spans = estimateSpanAllocations(profile, wall);
    const spanSum = [...spans.values()].reduce((a, e) => a + e.bytes, 0);
    assert.ok(spans.size > 10, `spans with an estimate: ${spans.size}`);
    assert.ok(Math.abs(spanSum - (heavy.bytes + light.bytes)) <= 0.01 * (heavy.bytes + light.bytes), `${spanSum}`);

    // Labels only where unambiguous, and then right: compare with the frames.
    const result = labelHeapSamples(profile, wall);
    assert.ok(result.labelledOperation > 0, JSON.stringify(result));
    let labelled = 0;
    let right = 0;
    const si = typeIndex(profile, space);
    for (const s of profile.sample) {
      const op = labelOf(profile, s, LABEL_OPERATION);
      if (op === undefined) continue;
      const names = stackNames(profile, s.locationId);
      const truth = names.includes('heavyRoute') ? HEAVY_OP : names.includes('lightRoute') ? LIGHT_OP : undefined;
      if (truth === undefined) continue;
      const bytes = Number(s.value[si] ?? 0);
      labelled += bytes;
      if (op === truth) right += bytes;
    }
    assert.ok(labelled > heavyFrames * 0.5, `labelled ${labelled} of ${heavyFrames} heavy-route bytes`);
    assert.ok(right / labelled >= 0.95, `labels right for ${(right / labelled).toFixed(3)} of labelled bytes`);
    assert.ok(profile.encode().length > 0, 'labelled profile still encodes');
  } finally {
    await service.close();
    heap.stop();
  }
  assert.deepEqual(diagnostics.counters(), {});
});
