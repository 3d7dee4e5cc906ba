/**
 * StackPool: samples with the same stack get the same location-id array,
 * and every array holds exactly the ids of its stack.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StackPool, stackHash } from '../../src/sampler/stack-pool.js';

/** A deterministic generator, so a failure can be replayed. */
function rng(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

test('packed stacks: equal stacks share one array, every array holds its stack', () => {
  const next = rng(7);
  // 40 distinct stacks of 0-30 frames, sampled 20,000 times.
  const distinct: number[][] = [];
  for (let k = 0; k < 40; k++) distinct.push(Array.from({ length: Math.floor(next() * 31) }, () => 1 + Math.floor(next() * 50)));
  distinct.push([]);
  // Packed ids are shifted by 1000 and mapped back, as a chunk's ids are mapped to the window's.
  const map = new Map<number, number>();
  for (let id = 1; id <= 50; id++) map.set(id + 1000, id);
  const pool = new StackPool();
  const firstOf = new Map<number, number[]>();
  for (let i = 0; i < 20_000; i++) {
    const k = Math.floor(next() * distinct.length);
    const want = distinct[k] as number[];
    const packed = Int32Array.from([7, 7, ...want.map((id) => id + 1000), 7]);
    const got = pool.fromPacked(packed, 2, 2 + want.length, map);
    assert.deepEqual(got, want);
    const first = firstOf.get(k);
    if (first === undefined) firstOf.set(k, got);
    else assert.equal(got, first, `stack ${k} got a second array`);
  }
  assert.equal(pool.size, new Set(distinct.map((d) => d.join(','))).size);
  assert.equal(pool.lookups, 20_000);
});

test('an id the map lacks becomes 0', () => {
  const pool = new StackPool();
  assert.deepEqual(pool.fromPacked(Int32Array.from([5, 6]), 0, 2, new Map([[5, 1]])), [1, 0]);
});

test('arrays as they are: the first of a stack is kept and shared; bigint ids get a number array', () => {
  const pool = new StackPool();
  const a = [3, 2, 1];
  assert.equal(pool.of(a), a);
  assert.equal(pool.of([3, 2, 1]), a);
  assert.notEqual(pool.of([1, 2, 3]), a);
  const fromBig = pool.of([9n, 8n]);
  assert.deepEqual(fromBig, [9, 8]);
  assert.equal(pool.of([9, 8]), fromBig);
  // Packed and given stacks share one pool.
  assert.equal(pool.fromPacked(Int32Array.from([3, 2, 1]), 0, 3, new Map([[3, 3], [2, 2], [1, 1]])), a);
});

test('200,000 random stacks: each distinct stack has its own array', () => {
  const pool = new StackPool();
  const next = rng(11);
  const seen = new Map<string, number[]>();
  for (let i = 0; i < 200_000; i++) {
    const stack = Array.from({ length: 1 + Math.floor(next() * 4) }, () => Math.floor(next() * 400));
    const got = pool.of(stack.slice());
    assert.deepEqual(got, stack);
    const key = stack.join(',');
    const first = seen.get(key);
    if (first === undefined) seen.set(key, got);
    else assert.equal(got, first);
  }
  assert.equal(pool.size, seen.size);
});

test('two different stacks with one hash get two arrays', () => {
  // Find a real collision of the pool's hash among random 3-frame stacks.
  const next = rng(3);
  const byHash = new Map<number, number[]>();
  let pair: [number[], number[]] | undefined;
  for (let i = 0; i < 2_000_000 && pair === undefined; i++) {
    const stack = [Math.floor(next() * 2 ** 20), Math.floor(next() * 2 ** 20), Math.floor(next() * 2 ** 20)];
    const h = stackHash(stack);
    const other = byHash.get(h);
    if (other !== undefined && other.join(',') !== stack.join(',')) pair = [other, stack];
    else byHash.set(h, stack);
  }
  assert.ok(pair !== undefined, 'no collision found');
  const [a, b] = pair;
  const pool = new StackPool();
  const ga = pool.of(a.slice());
  const gb = pool.of(b.slice());
  assert.notEqual(ga, gb);
  assert.deepEqual(ga, a);
  assert.deepEqual(gb, b);
  assert.equal(pool.of(a.slice()), ga);
  assert.equal(pool.of(b.slice()), gb);
  assert.equal(pool.size, 2);
});
