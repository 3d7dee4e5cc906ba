import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Label, Profile, Sample, StringTable, ValueType } from '../../src/core/pprof.js';
import type { WindowProfile } from '../../src/core/window.js';
import { labelTailSamples } from '../../src/exemplars/index.js';

function profileWith(spans: string[]): Profile {
  const t = new StringTable();
  const key = t.dedup('span_id');
  return new Profile({
    sampleType: [new ValueType({ type: t.dedup('sample'), unit: t.dedup('count') })],
    sample: spans.map(
      (id) => new Sample({ locationId: [], value: [1], label: id === '' ? [] : [new Label({ key, str: t.dedup(id) })] }),
    ),
    stringTable: t,
  });
}

test('labelTailSamples marks exactly the samples of tail spans, in every profile of the window', () => {
  const wall = profileWith(['aaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbb', '', 'aaaaaaaaaaaaaaaa']);
  const heap = profileWith(['aaaaaaaaaaaaaaaa']);
  const w = {
    wall,
    heap,
    tailSpans: [{ spanId: 'aaaaaaaaaaaaaaaa', traceId: 'f'.repeat(32), operation: 'GET /x (SERVER)', quantile: 'p99', thresholdMs: 10, durationMs: 50 }],
  } as unknown as WindowProfile;
  assert.equal(labelTailSamples(w), 3);
  const names = (p: Profile): Array<Record<string, string>> =>
    p.sample.map((s) => Object.fromEntries(s.label.map((l) => [p.stringTable.strings[Number(l.key)], p.stringTable.strings[Number(l.str)]])));
  const got = names(wall);
  assert.equal(got[0]!['profiler.tail.operation'], 'GET /x (SERVER)');
  assert.equal(got[0]!['profiler.tail.quantile'], 'p99');
  assert.equal(got[1]!['profiler.tail.operation'], undefined);
  assert.equal(got[2]!['profiler.tail.operation'], undefined);
  assert.equal(got[3]!['profiler.tail.operation'], 'GET /x (SERVER)');
  assert.equal(names(heap)[0]!['profiler.tail.quantile'], 'p99');
  // Round trip through the encoder keeps them.
  const back = Profile.decode(wall.encode());
  assert.equal(names(back)[0]!['profiler.tail.operation'], 'GET /x (SERVER)');
});

test('labelTailSamples leaves a window without tail spans untouched', () => {
  const wall = profileWith(['aaaaaaaaaaaaaaaa']);
  const before = wall.encode();
  assert.equal(labelTailSamples({ wall, tailSpans: [] } as unknown as WindowProfile), 0);
  assert.deepEqual(wall.encode(), before);
});
