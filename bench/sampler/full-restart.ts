/**
 * What a full restart of @datadog/pprof's wall profiler costs against a
 * restarting stop, in a process with a heap of some size: the first makes V8
 * enable its code logging again (three walks of the whole heap and a code
 * event for every compiled function), the second keeps V8's profiler running.
 * @datadog/pprof does the first when it suspects V8's profiler is stuck; see
 * certainStuckOnly in src/sampler/wall.ts.
 *
 *   node dist/bench/sampler/full-restart.js [--objects 400000] [--functions 3000] [--rounds 7]
 */
import { time } from '@datadog/pprof';
import { option } from '../args.js';
import { threadCpuMs } from '../thread-cpu.js';

const args = process.argv.slice(2);
const objects = Number(option(args, '--objects', '400000'));
const functions = Number(option(args, '--functions', '3000'));
const rounds = Number(option(args, '--rounds', '7'));

// A heap and a code space of some size: what a service has after start-up.
const keep: unknown[] = [];
for (let i = 0; i < objects; i++) keep.push({ i, s: `x${i}`, a: [i, i + 1] });
for (let i = 0; i < functions; i++) {
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const f = new Function('x', `return x + ${i};`) as (x: number) => number;
  keep.push(f(1), f);
}

const opts = {
  intervalMicros: 10_000,
  withContexts: true,
  collectCpuTime: true,
  useCPED: Number(process.versions.node.split('.')[0]) >= 24,
  workaroundV8Bug: false,
  lineNumbers: false,
};
const spin = (ms: number): void => {
  const end = Date.now() + ms;
  while (Date.now() < end);
};
const measure = (f: () => void): string => {
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let k = 0; k < rounds; k++) {
    spin(300);
    const c0 = threadCpuMs();
    const t0 = performance.now();
    f();
    cpu.push(threadCpuMs() - c0);
    wall.push(performance.now() - t0);
  }
  const med = (xs: number[]): string => [...xs].sort((a, b) => a - b)[xs.length >> 1]?.toFixed(1) ?? '?';
  return `main-thread CPU median ${med(cpu)} ms (${Math.min(...cpu).toFixed(1)}–${Math.max(...cpu).toFixed(1)}), wall median ${med(wall)} ms`;
};

time.start(opts);
console.log(`${process.version}, heap used ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MB, ${rounds} of each`);
console.log(`  stop(restart)         ${measure(() => time.stop(true))}`);
console.log(`  stop, then start      ${measure(() => {
  time.stop(false);
  time.start(opts);
})}`);
time.stop(false);
if (keep.length === 0) console.log('nothing kept');
