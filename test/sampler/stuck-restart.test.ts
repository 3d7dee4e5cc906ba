/**
 * A native stop restarts V8's profiler from scratch only when
 * @datadog/pprof's detector is certain it is stuck (see certainStuckOnly in
 * src/sampler/wall.ts). V8's stuck-processor bug cannot be provoked on
 * demand, so the verdicts 0/1/2 come from a stand-in check in the first test;
 * the second runs the real sampler's stops through the real native class.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { time } from '@datadog/pprof';
import { TimeProfiler } from '@datadog/pprof/out/src/time-profiler-bindings.js';
import { certainStuckOnly } from '../../src/sampler/wall.js';
import { spin, testSampler } from '../support/sampler.js';

test('a possible stuck verdict (1) reads as 0 during the stop and is reported; a certain one (2) passes', () => {
  for (const [answer, seen, possible] of [
    [0, 0, false],
    [1, 0, true],
    [2, 2, false],
  ] as const) {
    const check = function (this: { answer: number }): number {
      return this.answer;
    };
    const proto: Record<string, unknown> = { v8ProfilerStuckEventLoopDetected: check };
    const profiler = Object.assign(Object.create(proto) as { v8ProfilerStuckEventLoopDetected(): number }, { answer });
    const verdict = { possible: false };
    const read = certainStuckOnly(verdict, () => profiler.v8ProfilerStuckEventLoopDetected(), proto);
    assert.equal(read, seen, `answer ${answer}`);
    assert.equal(verdict.possible, possible, `answer ${answer}`);
    assert.equal(proto['v8ProfilerStuckEventLoopDetected'], check, 'the original check is back after the stop');
  }
  // A stop that throws still puts the check back.
  const check = (): number => 1;
  const proto: Record<string, unknown> = { v8ProfilerStuckEventLoopDetected: check };
  assert.throws(() =>
    certainStuckOnly({ possible: false }, () => {
      throw new Error('stop failed');
    }, proto),
  );
  assert.equal(proto['v8ProfilerStuckEventLoopDetected'], check);
});

test('the sampler stops through the real native class and leaves its check as it found it', () => {
  const proto = (TimeProfiler as { prototype: Record<string, unknown> }).prototype;
  const original = proto['v8ProfilerStuckEventLoopDetected'];
  assert.equal(typeof original, 'function', '@datadog/pprof still has the check spanfuse wraps');
  let insideStop: unknown;
  const sampler = testSampler();
  sampler.start();
  try {
    // 100 ms of CPU: ~100 samples for the window below.
    assert.ok(Number.isInteger(spin(100)));
    // The wrapper is in place while @datadog/pprof's stop runs, and only then.
    const verdict = { possible: false };
    certainStuckOnly(verdict, () => (insideStop = proto['v8ProfilerStuckEventLoopDetected']));
    assert.notEqual(insideStop, original);
    assert.equal(proto['v8ProfilerStuckEventLoopDetected'], original);
    const window = sampler.rotate(true);
    assert.ok(window !== undefined && window.wall.sample.length > 0, 'the window has samples');
    assert.equal(proto['v8ProfilerStuckEventLoopDetected'], original);
    assert.ok(time.isStarted(), 'the sampler still runs after a restarting stop');
    assert.ok(time.v8ProfilerStuckEventLoopDetected() !== 1, 'a 1 never reaches @datadog/pprof');
  } finally {
    sampler.rotate(false);
  }
  assert.equal(time.isStarted(), false);
});
