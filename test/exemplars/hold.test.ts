import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as turn } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { Hold } from '../../src/exemplars/hold.js';

interface Entry {
  readonly profileId: string;
  readonly deadline: number;
  readonly n: number;
}

void test('a burst of expired holds is released a few per event-loop turn, in order, none lost', async () => {
  const batches: number[][] = [];
  const turnsAtBatch: number[] = [];
  let turns = 0;
  const hold = new Hold<Entry>(1000, 5, (expired) => {
    batches.push(expired.map((e) => e.n));
    turnsAtBatch.push(turns);
  }, 8);
  // 50 entries that all expire at the same moment (a window that never closed).
  const deadline = performance.now() + 5;
  for (let n = 0; n < 50; n++) hold.add({ profileId: 'w1', deadline, n });
  while (hold.size > 0) {
    await turn();
    turns++;
    if (turns > 100_000) assert.fail('the hold never emptied');
  }
  assert.deepEqual(batches.flat(), Array.from({ length: 50 }, (_, n) => n), 'every entry once, in arrival order');
  assert.ok(batches.every((b) => b.length <= 8), `batches larger than 8: ${batches.map((b) => b.length).join(',')}`);
  assert.equal(batches.length, 7);
  for (let i = 1; i < turnsAtBatch.length; i++) {
    assert.ok((turnsAtBatch[i] ?? 0) > (turnsAtBatch[i - 1] ?? 0), 'two batches in the same event-loop turn');
  }
  assert.deepEqual(hold.pendingProfileIds(), []);
});

void test('without a per-turn limit, everything expired goes at once (the default)', async () => {
  const batches: number[] = [];
  const hold = new Hold<Entry>(1000, 1, (expired) => batches.push(expired.length));
  const deadline = performance.now() + 1;
  for (let n = 0; n < 20; n++) hold.add({ profileId: 'w', deadline, n });
  while (hold.size > 0) await turn();
  assert.deepEqual(batches, [20]);
});
