// The two readers agree: one real sampled window (the @datadog/pprof sampler,
// span labels, tail labels) encoded as pprof and as an OTLP request must give
// the same samples per span and per frame, the same tail labels, and the same
// flamegraph tree.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { labelTailSamples } from '../../src/exemplars/index.js';
import { encodeOtlpRequest, encodePprofSync } from '../../src/profile/index.js';
import { flameOf, SampleStore, summarizeRows } from '../../src/debug/index.js';
import { addOtlp } from '../../src/debug/read-otlp.js';
import { addPprof } from '../../src/debug/read-pprof.js';
import { newSpan, sampledWindow } from '../profile/fixtures.js';

function perSpan(store: SampleStore): Map<string, string> {
  const out = new Map<string, { samples: number; wall: number; cpu: number; tail: string }>();
  for (const r of store.rows) {
    const e = out.get(r.spanId) ?? { samples: 0, wall: 0, cpu: 0, tail: '' };
    e.samples += r.samples;
    e.wall += r.wallNs;
    e.cpu += r.cpuNs;
    if (r.tailOperation !== '') e.tail = `${r.tailOperation}/${r.tailQuantile}`;
    out.set(r.spanId, e);
  }
  return new Map([...out].map(([k, v]) => [k, JSON.stringify(v)]));
}

test('pprof and OTLP of the same window read back to the same samples, spans, tail labels and tree', () => {
  const spans = [newSpan('GET /a'), newSpan('GET /b')];
  const w = sampledWindow(spans, 30);
  w.tailSpans.push({ spanId: spans[1]!.span_id, traceId: spans[1]!.trace_id, operation: 'GET /b (SERVER)', quantile: 'p99', thresholdMs: 5, durationMs: 30 });
  assert.ok(labelTailSamples(w) > 0);
  const a = new SampleStore();
  addPprof(a, encodePprofSync(w.wall), { file: 'w.pb', profileId: w.profileId });
  const b = new SampleStore();
  addOtlp(b, encodeOtlpRequest(w, { resource: { 'service.name': 't' }, scopeName: 's', scopeVersion: '0' }), { file: 'w.otlp.pb', profileId: '' });
  assert.ok(a.rows.length > 0);
  assert.deepEqual(perSpan(b), perSpan(a));
  assert.equal(JSON.parse(perSpan(a).get(spans[1]!.span_id)!).tail, 'GET /b (SERVER)/p99');
  assert.equal(b.windows[0]?.profileId, w.profileId, 'OTLP profile_id read back');
  assert.equal(b.windows[0]?.startNs, Number(w.startUnixNs));
  const treeOf = (s: SampleStore): string => {
    const doc = flameOf(s, summarizeRows(s.rows, 'all', 1), 'wall');
    // Same shape: frame names in preorder with their totals.
    return doc.tree.frame.map((f, i) => `${doc.tree.depth[i]}:${doc.names[f]}:${doc.tree.values.map((v) => v[i]).join('/')}`).join('\n');
  };
  assert.equal(treeOf(b), treeOf(a));
});
