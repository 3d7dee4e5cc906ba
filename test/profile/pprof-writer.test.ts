import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Profile } from '../../src/core/pprof.js';
import { encodePprof } from '../../src/profile/index.js';
import { handProfile, newSpan, sampledWindow } from './fixtures.js';

void test('our pprof bytes equal pprof-format encode() for a real sampled profile', async () => {
  const w = sampledWindow([newSpan('GET /a'), newSpan('GET /b')], 30);
  const ours = Buffer.from(await encodePprof(w.wall, 5));
  const theirs = Buffer.from(w.wall.encode());
  assert.ok(ours.equals(theirs), `same bytes (${ours.length} vs ${theirs.length})`);
});

void test('round trip through pprof-format decode keeps every field', async () => {
  const p = handProfile(
    [['space', 'bytes']],
    [{ stack: [{ name: 'a', file: '/x.js', line: 3 }], values: [4096], labels: { k: 'v', n: 5n } }],
    524288,
  );
  p.comment = [p.stringTable.dedup('hello')];
  p.timeNanos = 1_790_000_000_000_000_000n;
  p.durationNanos = 60_000_000_000;
  const d = Profile.decode(await encodePprof(p));
  assert.deepEqual(d.stringTable.strings, p.stringTable.strings);
  assert.equal(d.sample[0]?.value[0], 4096);
  assert.equal(d.sample[0]?.label.length, 2);
  assert.equal(Number(d.period), 524288);
  assert.equal(BigInt(d.timeNanos), 1_790_000_000_000_000_000n);
  assert.equal(d.stringTable.strings[Number(d.comment[0])], 'hello');
  assert.equal(d.stringTable.strings[Number(d.function[0]?.filename)], '/x.js');
});
