import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Problems } from '../../src/config/env.js';
import { resolveTailConfig } from '../../src/config/tail.js';
import type { TailOptions } from '../../src/config/tail.js';

function resolve(options: TailOptions | undefined, env: Record<string, string> = {}) {
  const problems = new Problems();
  const settings = resolveTailConfig(options, env, problems);
  return { settings, problems: problems.list };
}

void test('defaults: p99 with no budget, warm-up 100, hold bounded by window + margin', () => {
  const { settings, problems } = resolve(undefined);
  assert.deepEqual(problems, []);
  assert.deepEqual(settings.rule, { quantile: 0.99, quantileLabel: 'p99', budgetMs: undefined });
  assert.equal(settings.enabled, true);
  assert.equal(settings.warmup, 100);
  assert.equal(settings.halfLifeMs, 300_000);
  assert.equal(settings.holdMaxDelayMs, undefined);
  assert.equal(settings.holdMarginMs, 5000);
  assert.ok(settings.holdMaxSpans > 0);
});

void test('SPANFUSE_TAIL_THRESHOLD_MS alone selects fixed-budget mode', () => {
  const { settings, problems } = resolve(undefined, { SPANFUSE_TAIL_THRESHOLD_MS: '250' });
  assert.deepEqual(problems, []);
  assert.deepEqual(settings.rule, { quantile: undefined, quantileLabel: undefined, budgetMs: 250 });
});

void test('quantile forms: p95, p99.9, 0.999; with a budget both apply', () => {
  assert.deepEqual(resolve(undefined, { SPANFUSE_TAIL_QUANTILE: 'p95' }).settings.rule, { quantile: 0.95, quantileLabel: 'p95', budgetMs: undefined });
  assert.equal(resolve({ quantile: 'p99.9' }).settings.rule.quantileLabel, 'p99.9');
  assert.equal(resolve({ quantile: 'p99.9' }).settings.rule.quantile, 0.999);
  assert.equal(resolve({ quantile: 0.999 }).settings.rule.quantileLabel, 'p99.9');
  const both = resolve({ thresholdMs: 500 }, { SPANFUSE_TAIL_QUANTILE: 'p95' }).settings.rule;
  assert.deepEqual(both, { quantile: 0.95, quantileLabel: 'p95', budgetMs: 500 });
});

void test('code wins over env; env fills the rest', () => {
  const { settings } = resolve(
    { quantile: 'p90', warmup: 7 },
    { SPANFUSE_TAIL_QUANTILE: 'p95', SPANFUSE_TAIL_WARMUP: '50', SPANFUSE_TAIL_HOLD_MAX_SPANS: '12', SPANFUSE_TAIL_HOLD_MARGIN_MS: '0' },
  );
  assert.equal(settings.rule.quantileLabel, 'p90');
  assert.equal(settings.warmup, 7);
  assert.equal(settings.holdMaxSpans, 12);
  assert.equal(settings.holdMarginMs, 0, 'zero is expressible');
  assert.equal(resolve(undefined, { SPANFUSE_TAIL_HALF_LIFE_MS: '0' }).settings.halfLifeMs, 0, 'no decay is expressible');
  const bad = resolve({ halfLifeMs: 500 });
  assert.deepEqual(bad.problems.map((p) => p.field), ['tail.halfLifeMs']);
});

void test('per-operation overrides replace the global rule', () => {
  const { settings, problems } = resolve({ operations: { 'GET /slow (SERVER)': { thresholdMs: 2000 }, batch: { quantile: 'p50' } } });
  assert.deepEqual(problems, []);
  assert.deepEqual(settings.overrides.get('GET /slow (SERVER)'), { quantile: undefined, quantileLabel: undefined, budgetMs: 2000 });
  assert.equal(settings.overrides.get('batch')?.quantileLabel, 'p50');
});

void test('bad input: every problem named with its field, nothing thrown', () => {
  const { problems } = resolve(
    { quantile: 'p100', thresholdMs: -1, warmup: 1.5, operations: { x: {} } },
    { SPANFUSE_TAIL_QUANTILE: 'high', SPANFUSE_TAIL_THRESHOLD_MS: 'soon', SPANFUSE_TAIL_HOLD_MAX_SPANS: '-3', SPANFUSE_TAIL_ENABLED: 'maybe' },
  );
  const fields = problems.map((p) => p.field).sort();
  assert.deepEqual(fields, [
    'SPANFUSE_TAIL_ENABLED',
    'SPANFUSE_TAIL_HOLD_MAX_SPANS',
    'SPANFUSE_TAIL_THRESHOLD_MS',
    'tail.operations["x"]',
    'tail.quantile',
    'tail.thresholdMs',
    'tail.warmup',
  ]);
  for (const p of problems) assert.match(p.message, /expected|set /);
});
