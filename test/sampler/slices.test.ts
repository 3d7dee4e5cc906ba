import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSliced } from '../../src/core/slices.js';

void test('sliced jobs share one queue: the oldest runs first, one budget per turn, errors reject only their job', async () => {
  const order: string[] = [];
  let turns = 0;
  let ticking = true;
  const tick = (): void => {
    turns++;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  function* job(name: string, steps: number, fail = false): Generator<void, string, void> {
    for (let i = 1; i <= steps; i++) {
      order.push(`${name}${i}@${turns}`);
      if (fail && i === 2) throw new Error(`${name} failed`);
      yield;
    }
    return name;
  }
  const a = runSliced(job('a', 3), 0);
  const b = runSliced(job('b', 3, true), 0);
  const c = runSliced(job('c', 2), 0);
  assert.equal(order.length, 0, 'nothing runs in the caller\u2019s turn');
  assert.equal(await a, 'a');
  await assert.rejects(b, /b failed/);
  assert.equal(await c, 'c');
  ticking = false;
  const names = order.map((o) => o.split('@')[0]);
  assert.deepEqual(names, ['a1', 'a2', 'a3', 'b1', 'b2', 'c1', 'c2']);
  // A 0 ms budget: one step per turn, so no two steps share a turn.
  const at = order.map((o) => Number(o.split('@')[1]));
  assert.equal(new Set(at).size, at.length, `steps shared a turn: ${order.join(' ')}`);
});
