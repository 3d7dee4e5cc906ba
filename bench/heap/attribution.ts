/**
 * Accuracy of allocation attribution on the two-route service of the tests
 * (test/heap/traced-service.ts): `/heavy` allocates 10x what `/light` does.
 * Ground truth per heap sample comes from its frames (distinct route
 * functions); the figure under test comes from attributeAllocations, which
 * sees only the heap and the span-labelled wall profile. Also runs the hard
 * case where both routes share one code path (identical stacks), where only
 * time spent tells them apart.
 *
 *   node .build/heap/bench/heap/attribution.js [--runs 5] [--requests 60] [--wall-us 1000|10000]
 */
import { Diagnostics } from '../../src/core/index.js';
import { attributeAllocations, startHeapSampler } from '../../src/heap/index.js';
import type { Profile } from '../../src/core/index.js';
import { HEAVY_OP, LIGHT_OP, startTracedService } from '../../test/heap/traced-service.js';
import { arg } from './harness.js';

const runs = Number(arg('runs', '5'));
const requests = Number(arg('requests', '60'));
const wallMicros = Number(arg('wall-us', '1000'));

function framesShare(p: Profile): number {
  const strings = p.stringTable.strings;
  const fn = new Map(p.function.map((f) => [Number(f.id), strings[Number(f.name)]]));
  const loc = new Map(p.location.map((l) => [Number(l.id), fn.get(Number(l.line[0]?.functionId))]));
  const vi = p.sampleType.findIndex((t) => strings[Number(t.type)] === 'alloc_space');
  let heavy = 0;
  let light = 0;
  for (const s of p.sample) {
    const names = s.locationId.map((id) => loc.get(Number(id)));
    const v = Number(s.value[vi] ?? 0);
    if (names.includes('heavyRoute')) heavy += v;
    else if (names.includes('lightRoute')) light += v;
  }
  return heavy / (heavy + light);
}

for (const shared of [false, true]) {
  const rows: string[] = [];
  for (let r = 0; r < runs; r++) {
    const heap = startHeapSampler({ intervalBytes: 512 * 1024, stackDepth: 64, allocations: true }, new Diagnostics());
    if (heap === undefined) throw new Error('no heap sampler');
    const svc = await startTracedService(wallMicros, shared);
    await svc.drive(10, 2);
    svc.wallProfile();
    heap.collect();
    await svc.drive(requests, 4);
    const wall = svc.wallProfile();
    const p = heap.collect();
    await svc.close();
    heap.stop();
    if (p === undefined) throw new Error('no heap profile');
    const t0 = performance.now();
    const ops = attributeAllocations(p, wall);
    const ms = performance.now() - t0;
    const h = ops.find((o) => o.operation === HEAVY_OP)?.bytes ?? 0;
    const l = ops.find((o) => o.operation === LIGHT_OP)?.bytes ?? 0;
    const total = ops.reduce((a, o) => a + o.bytes, 0);
    const truth = shared ? Number.NaN : framesShare(p);
    rows.push(
      `run ${r}: heavy share of route bytes: attributed ${(h / (h + l)).toFixed(3)}` +
        (shared ? '' : `, by frames ${truth.toFixed(3)}`) +
        `; heavy of all sampled ${(h / total).toFixed(3)}; heavy/light ${(h / l).toFixed(1)}` +
        `; ${p.sample.length} heap x ${wall.sample.length} wall samples in ${ms.toFixed(1)} ms`,
    );
  }
  console.log(`${shared ? 'shared code path' : 'distinct route functions'} (node ${process.version}, wall ${wallMicros} us, heap 512 KiB)`);
  for (const row of rows) console.log('  ' + row);
}
