import assert from 'node:assert/strict';
import { test } from 'node:test';
import { aggregate } from '../../bench/overhead/report.js';
import type { RunResult } from '../../bench/overhead/run-one.js';
import { cpuKernel, fixedWorkMeter } from '../../bench/overhead/work.js';

void test('the fixed-work meter times every 8th kernel call and scales by the iterations it timed', () => {
  // A clock that advances 1 ns per kernel iteration between the two reads of
  // a timed call: the second read of a pair adds the call's iterations.
  let now = 0;
  let pending = 0;
  let reads = 0;
  const clock = (): number => {
    if (++reads % 2 === 0) {
      now += pending;
      pending = 0;
    }
    return now;
  };
  const m = fixedWorkMeter(clock);
  const sizes = [100, 300, 50, 700, 20, 1000, 5, 400];
  let total = 0;
  for (let round = 0; round < 10; round++) {
    for (const n of sizes) {
      total += n;
      // The kernel's result is the kernel's: timing it changes nothing.
      const before = now;
      const calls = round * sizes.length + sizes.indexOf(n) + 1;
      if (calls % 8 === 0) pending = n;
      assert.equal(m.kernel(n), cpuKernel(n));
      if (calls % 8 !== 0) assert.equal(now, before, 'untimed calls do not read the clock');
      else assert.equal(now - before, n);
    }
  }
  // Timed: the 8th call of each round (400 iterations, 400 ns), scaled to all
  // iterations: 1 ns per iteration, so the estimate is the total in µs.
  assert.equal(reads, 20);
  assert.equal(m.estimateMicros(), total / 1000);
  m.reset();
  assert.ok(Number.isNaN(m.estimateMicros()), 'nothing timed since reset');
});

function run(config: string, round: number, cpu: number, inside: number): RunResult {
  return {
    config,
    runtime: 'node24',
    round,
    ok: true,
    cpuPerRequestMicros: cpu,
    fixedCpuPerRequestMicros: inside,
    outsideCpuPerRequestMicros: cpu - inside,
  };
}

void test('the report splits CPU per request at the fixed work and gives the ratio at equal fixed-work speed', () => {
  const results = [
    run('control', 0, 560, 520),
    run('profiled', 0, 600, 540), // outside 60 against 40: +20 µs
    run('control', 1, 550, 510),
    run('profiled', 1, 575, 520), // outside 55 against 40: +15 µs
  ];
  const [control, profiled] = aggregate(results, ['control', 'profiled'], ['node24']);
  assert.equal(control?.fixedWork?.inside?.median, 515);
  const f = profiled?.fixedWork;
  assert.ok(f !== null && f !== undefined);
  assert.equal(f.outsideDelta?.min, 15);
  assert.equal(f.outsideDelta?.max, 20);
  assert.equal(f.atEqualSpeed?.min, (550 + 15) / 550);
  assert.equal(f.atEqualSpeed?.max, (560 + 20) / 560);
  assert.equal(f.insideRatio?.max, 540 / 520);
  // Runs without the split (Node 20, or no BENCH_FIXED_CPU) get no row.
  const [plain] = aggregate([{ config: 'control', runtime: 'node20', round: 0, ok: true, cpuPerRequestMicros: 580 }], ['control'], ['node20']);
  assert.equal(plain?.fixedWork, null);
});
