import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DDSketch } from '@datadog/sketches-js';
import { LogSketch } from '../../src/exemplars/index.js';
import { exactQuantile, gaussian, rng } from './helpers.js';

const QUANTILES = [0.5, 0.95, 0.99, 0.999];
// Float rounding at bucket edges; far below the 1% guarantee being checked.
const EPS = 1e-9;

function heavyTailed(n: number, seed: number): number[] {
  const r = rng(seed);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    // Mixture: log-normal body (median 12 ms) and a Pareto tail (alpha 1.3).
    if (r() < 0.9) out.push(12 * Math.exp(0.6 * gaussian(r)));
    else out.push(20 / Math.pow(1 - r(), 1 / 1.3));
  }
  return out;
}

for (const alpha of [0.01, 0.02]) {
  void test(`LogSketch(${alpha}): p50/p95/p99/p99.9 of 10^5 heavy-tailed latencies within the stated relative error`, () => {
    const xs = heavyTailed(100_000, 42);
    const sketch = new LogSketch(alpha, 2048);
    for (const x of xs) sketch.add(x);
    const sorted = [...xs].sort((a, b) => a - b);
    assert.ok(sorted.at(-1)! / sorted[0]! > 1000, 'the data spans more than three decades');
    for (const q of QUANTILES) {
      const exact = exactQuantile(sorted, q);
      const est = sketch.quantile(q);
      const rel = Math.abs(est - exact) / exact;
      assert.ok(rel <= alpha + EPS, `q=${q}: exact ${exact}, estimate ${est}, relative error ${rel} > ${alpha}`);
    }
    assert.equal(sketch.count, 100_000);
    assert.equal(sketch.collapsed, 0);
  });
}

void test('LogSketch agrees with @datadog/sketches-js DDSketch (independent implementation) on the same data', () => {
  const xs = heavyTailed(100_000, 7);
  const mine = new LogSketch(0.01, 2048);
  const theirs = new DDSketch({ relativeAccuracy: 0.01 });
  for (const x of xs) {
    mine.add(x);
    theirs.accept(x);
  }
  for (const q of [0.1, ...QUANTILES]) {
    const a = mine.quantile(q);
    const b = theirs.getValueAtQuantile(q);
    // Same mapping family, same rank rule: both within 1% of the same exact value.
    assert.ok(Math.abs(a - b) / b <= 0.0201, `q=${q}: mine ${a}, DDSketch ${b}`);
  }
});

void test('LogSketch collapses its lowest buckets at maxBins; high quantiles keep the guarantee, memory stays bounded', () => {
  const r = rng(3);
  const xs: number[] = [];
  // Nine decades: 1e-3 .. 1e6 ms.
  for (let i = 0; i < 50_000; i++) xs.push(Math.pow(10, -3 + 9 * r()));
  const sketch = new LogSketch(0.01, 256);
  for (const x of xs) sketch.add(x);
  assert.ok(sketch.collapsed > 0, 'the range needs more than 256 buckets, so some collapsed');
  assert.ok(sketch.byteLength <= (256 + 8) * 8);
  const sorted = [...xs].sort((a, b) => a - b);
  for (const q of [0.99, 0.999]) {
    const exact = exactQuantile(sorted, q);
    assert.ok(Math.abs(sketch.quantile(q) - exact) / exact <= 0.01 + EPS, `q=${q}`);
  }
});

void test('LogSketch edge cases: empty, zeros, a single value', () => {
  const s = new LogSketch();
  assert.ok(Number.isNaN(s.quantile(0.99)));
  s.add(0);
  s.add(0);
  assert.equal(s.quantile(0.99), 0);
  const one = new LogSketch();
  one.add(5);
  assert.ok(Math.abs(one.quantile(0.5) - 5) <= 0.05);
  assert.throws(() => new LogSketch(0));
  assert.throws(() => new LogSketch(0.01, 1));
});

void test('trackedQuantile() answers exactly what quantile() answers after every add, through growth and collapse', () => {
  for (const [q, maxBins, seed] of [
    [0.99, 64, 1],
    [0.95, 512, 2],
    [0.5, 128, 3],
    [0.999, 32, 4],
  ] as const) {
    const s = new LogSketch(0.01, maxBins, q);
    const r = rng(seed);
    for (let i = 0; i < 20_000; i++) {
      const u = r();
      // Zeros, sub-microsecond values, a body and far outliers; a drift upwards.
      const x = u < 0.02 ? 0 : u < 0.1 ? 1e-4 * r() : u < 0.99 ? (1 + i / 2000) * Math.exp(gaussian(r)) : 1e4 * r();
      s.add(x);
      if (i % 3 === 0 || i < 200) assert.equal(s.trackedQuantile(), s.quantile(q), `q=${q} maxBins=${maxBins} after ${i + 1} values`);
    }
    assert.ok(s.collapsed > 0 || maxBins === 512);
  }
  assert.ok(Number.isNaN(new LogSketch().trackedQuantile()), 'no tracked quantile given');
});

void test('scale(): quantiles keep their value, recent observations then weigh more; tracked stays equal to quantile()', () => {
  const s = new LogSketch(0.01, 256, 0.99);
  const r = rng(21);
  for (let i = 0; i < 5000; i++) s.add(10 * Math.exp(0.3 * gaussian(r)));
  const before = s.quantile(0.99);
  s.scale(0.5);
  assert.equal(s.quantile(0.99), before);
  assert.equal(s.trackedQuantile(), before);
  assert.equal(s.count, 2500);
  for (let i = 0; i < 3000; i++) {
    s.add(100 * Math.exp(0.3 * gaussian(r)));
    if (i % 7 === 0) assert.equal(s.trackedQuantile(), s.quantile(0.99));
    if (i % 500 === 0) s.scale(0.9);
  }
  // 3000 new values at ~100 vs the old ones weighing 2500 * decay: the median is now new.
  assert.ok(s.quantile(0.5) > 50, `median ${s.quantile(0.5)}`);
});
