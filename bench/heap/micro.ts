/**
 * The sampling itself, without HTTP or window collection: CPU time of an
 * allocation-heavy function with the native in-use sampler off and on at
 * several intervals, interleaved in one process (order reversed every other
 * round), median over rounds, relative to off.
 *
 *   node .build/heap/bench/heap/micro.js [--rounds 12] [--iterations 400]
 */
import { heap } from '@datadog/pprof';
import { arg, median } from './harness.js';

const rounds = Number(arg('rounds', '12'));
const iterations = Number(arg('iterations', '400'));

function work(): number {
  const items = [];
  for (let i = 0; i < 2000; i++) items.push({ id: i, sku: `sku-${i % 97}`, tags: ['a', 'b', String(i % 5)] });
  return JSON.stringify(items).length;
}

function cpuMicros(n: number): number {
  const c0 = process.cpuUsage();
  let x = 0;
  for (let i = 0; i < n; i++) x += work();
  const c = process.cpuUsage(c0);
  if (x < 0) throw new Error('unreachable');
  return c.user + c.system;
}

const intervals = [0, 128 * 1024, 512 * 1024, 1024 * 1024];
const runs = new Map<number, number[]>(intervals.map((i) => [i, []]));
cpuMicros(iterations * 5); // warm-up
for (let r = 0; r < rounds; r++) {
  for (const iv of r % 2 === 0 ? intervals : [...intervals].reverse()) {
    if (iv > 0) heap.start(iv, 64);
    runs.get(iv)?.push(cpuMicros(iterations));
    if (iv > 0) heap.stop();
  }
}
const base = median(runs.get(0) ?? []);
for (const [iv, values] of runs) {
  const label = iv === 0 ? 'off' : `${iv / 1024} KiB`;
  console.log(`${process.version} in-use sampler ${label.padEnd(9)} cpu x${(median(values) / base).toFixed(3)}`);
}
