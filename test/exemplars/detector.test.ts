import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { SpanKind } from '@opentelemetry/api';
import { OVERFLOW_OPERATION, TailDetector, operationKey, tailSettings } from '../../src/exemplars/index.js';
import { exactQuantile, gaussian, insertSorted, rng } from './helpers.js';

/**
 * 2,500 spans of one operation; 0.8% of them (one in 125, at a seeded phase)
 * 5-8x slower. Evenly spread like a load generator would send them: with
 * random placement the slow share of a short history can exceed 1%, and
 * then p99 itself is a slow span's duration, which no detector can beat.
 */
function bimodal(seed: number): { durations: number[]; slow: boolean[] } {
  const r = rng(seed);
  const phase = Math.floor(r() * 125);
  const durations: number[] = [];
  const slow: boolean[] = [];
  for (let i = 0; i < 2500; i++) {
    const base = 10 * Math.exp(0.15 * gaussian(r));
    const isSlow = i % 125 === phase;
    durations.push(isSlow ? base * (5 + 3 * r()) : base);
    slow.push(isSlow);
  }
  return { durations, slow };
}

void test('operation key: name, route when the name lacks it, kind', () => {
  assert.equal(operationKey('GET', SpanKind.SERVER, '/users/:id'), 'GET /users/:id (SERVER)');
  assert.equal(operationKey('GET /users/:id', SpanKind.SERVER, '/users/:id'), 'GET /users/:id (SERVER)');
  assert.equal(operationKey('db.query', SpanKind.CLIENT, undefined), 'db.query (CLIENT)');
});

void test('p99 mode on a bimodal workload: slow spans marked, agreement with the exact quantile outside the error band', () => {
  const warmup = 100;
  const alpha = 0.01;
  for (const seed of [1, 2, 3]) {
    const { durations, slow } = bimodal(seed);
    const det = new TailDetector(tailSettings({ warmup, relativeAccuracy: alpha }));
    const seen: number[] = [];
    let slowAfterWarmup = 0;
    let slowMarked = 0;
    let outsideBand = 0;
    let agree = 0;
    let marked = 0;
    for (let i = 0; i < durations.length; i++) {
      const d = durations[i]!;
      const v = det.observe('GET /orders', SpanKind.SERVER, '/orders', d);
      if (v !== undefined) marked++;
      if (i >= warmup) {
        // Offline: exact p99 of exactly the observations the sketch held.
        const exact = exactQuantile(seen, 0.99);
        if (slow[i]) {
          slowAfterWarmup++;
          if (v !== undefined) slowMarked++;
        }
        if (Math.abs(d - exact) > alpha * exact) {
          outsideBand++;
          if ((v !== undefined) === d > exact) agree++;
        }
        if (v !== undefined) {
          assert.equal(v.quantile, 'p99');
          assert.equal(v.operation, 'GET /orders (SERVER)');
          assert.ok(Math.abs(v.thresholdMs - exact) <= alpha * exact + 1e-9, 'reported threshold is the sketch p99');
        }
      } else {
        assert.equal(v, undefined, 'nothing marked during warm-up without a budget');
      }
      insertSorted(seen, d);
    }
    assert.ok(slowAfterWarmup >= 19, `seed ${seed}: enough slow spans (${slowAfterWarmup})`);
    assert.ok(slowMarked / slowAfterWarmup >= 0.99, `seed ${seed}: ${slowMarked}/${slowAfterWarmup} slow spans marked`);
    assert.ok(agree / outsideBand >= 0.99, `seed ${seed}: agreement ${agree}/${outsideBand}`);
    assert.ok(marked > 0 && marked < durations.length * 0.05, `seed ${seed}: marks ${marked} look like a tail`);
  }
});

void test('fixed-budget mode marks exactly the spans above the budget, from the first span', () => {
  const { durations } = bimodal(9);
  const det = new TailDetector(tailSettings({ rule: { quantile: undefined, quantileLabel: undefined, budgetMs: 40 } }));
  for (const d of durations) {
    const v = det.observe('job', SpanKind.INTERNAL, undefined, d);
    assert.equal(v !== undefined, d > 40, `duration ${d}`);
    if (v !== undefined) {
      assert.equal(v.quantile, 'budget');
      assert.equal(v.thresholdMs, 40);
    }
  }
  assert.equal(det.operation('job', SpanKind.INTERNAL, undefined).sketch, undefined, 'budget-only rule keeps no sketch');
});

void test('quantile plus budget: the budget applies during warm-up, the quantile after', () => {
  const det = new TailDetector(tailSettings({ warmup: 50, rule: { quantile: 0.95, quantileLabel: 'p95', budgetMs: 100 } }));
  for (let i = 0; i < 50; i++) {
    const v = det.observe('op', SpanKind.INTERNAL, undefined, i === 10 ? 150 : 10 + (i % 10));
    assert.equal(v?.quantile, i === 10 ? 'budget' : undefined);
  }
  const v = det.observe('op', SpanKind.INTERNAL, undefined, 30);
  assert.equal(v?.quantile, 'p95');
});

void test('per-operation overrides by operation key or span name', () => {
  const det = new TailDetector(
    tailSettings({
      warmup: 0,
      overrides: new Map([
        ['GET /slow (SERVER)', { quantile: undefined, quantileLabel: undefined, budgetMs: 1000 }],
        ['batch', { quantile: 0.5, quantileLabel: 'p50', budgetMs: undefined }],
      ]),
    }),
  );
  assert.equal(det.operation('GET', SpanKind.SERVER, '/slow').rule.budgetMs, 1000);
  assert.equal(det.operation('batch', SpanKind.CONSUMER, undefined).rule.quantileLabel, 'p50');
  assert.equal(det.operation('other', SpanKind.CONSUMER, undefined).rule.quantileLabel, 'p99');
});

void test('10^5 distinct span names: operations capped, the rest share the overflow operation, heap stays flat', () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const max = 512;
  const det = new TailDetector(tailSettings({ maxOperations: max, warmup: 10 }));
  const r = rng(5);
  for (let i = 0; i < 2 * max; i++) det.observe(`name-${i}`, SpanKind.INTERNAL, undefined, 1 + 100 * r());
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < 100_000; i++) {
    det.observe(`span-${i}-${'x'.repeat(i % 50)}`, i % 5, i % 3 === 0 ? `/r/${i}` : undefined, 1 + 100 * r());
  }
  gc();
  const grown = process.memoryUsage().heapUsed - before;
  assert.equal(det.operationCount, max);
  assert.equal(det.overflowed, max + 100_000);
  assert.equal(det.operation('never-seen', SpanKind.INTERNAL, undefined).key, OVERFLOW_OPERATION);
  // Buckets (8 bytes each) plus one block sum per 32 buckets.
  assert.ok(det.sketchBytes() <= (max + 1) * (512 + 16) * 8, `sketch bytes ${det.sketchBytes()}`);
  // 10^5 names of ~60 bytes each would be > 6 MB if they were kept.
  assert.ok(grown < 2 * 1024 * 1024, `heap grew by ${grown} bytes over 10^5 new names`);
});

void test('half-life: after latency improves, the running p99 follows the new regime; without decay it stays stuck high', () => {
  const thresholdAfterShift = (halfLifeMs: number): number => {
    const det = new TailDetector(tailSettings({ halfLifeMs }));
    const r = rng(8);
    const t0 = 1_700_000_000;
    // One hour at ~50 ms, then one hour at ~10 ms; 10 spans a second.
    for (let i = 0; i < 36_000; i++) det.observe('op', SpanKind.SERVER, undefined, 50 * Math.exp(0.1 * gaussian(r)), t0 + Math.floor(i / 10));
    for (let i = 0; i < 36_000; i++) det.observe('op', SpanKind.SERVER, undefined, 10 * Math.exp(0.1 * gaussian(r)), t0 + 3600 + Math.floor(i / 10));
    return det.operation('op', SpanKind.SERVER, undefined).sketch!.trackedQuantile();
  };
  // A p99 follows once the old regime's residual weight drops below 1%:
  // about 6.6 half-lives. One hour is 12 half-lives of the default 5 minutes.
  const decayed = thresholdAfterShift(300_000);
  const cumulative = thresholdAfterShift(0);
  assert.ok(decayed < 15, `with a 5-minute half-life the p99 is back near 10 ms: ${decayed}`);
  assert.ok(cumulative > 40, `without decay the old 50 ms regime still owns the p99: ${cumulative}`);
});
