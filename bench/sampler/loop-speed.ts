/**
 * Does @datadog/pprof's sampler slow the app's own code? The overhead bench
 * found the service's fixed loop 2.6–2.8 % slower in profiled processes at
 * steady state, but loops of two plain processes also differ by ±3 % (JIT
 * code layout, CPU placement), so across processes the question stays open.
 *
 * Here one process times the same optimized loop with the sampler started
 * and stopped, alternately, block after block: the same JIT code, the same
 * CPU, only the sampler differs. Each block runs a fixed number of the
 * overhead bench's kernel calls and is timed with the main thread's CPU
 * clock (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)` through koffi), so the
 * sampler's own thread is not counted and its interrupts of this thread
 * are. The order of on/off alternates per round.
 *
 *   node dist/bench/sampler/loop-speed.js [--rounds 20] [--block-ms 400] [--interval-us 10000]
 *     [--no-contexts] [--no-cpu-time] [--yield] [--across N]
 *
 * `--across N` asks the other question: does a process whose sampler ran
 * from its start (so its code was optimized under the profiler) run the loop
 * slower than one without? N child processes of each kind, alternating,
 * each warming up then timing one block; their medians are compared. Across
 * processes the loop's speed varies by a few percent by itself, hence N.
 *
 * `--yield` runs each kernel call in its own event-loop turn (setImmediate),
 * as the service does between awaits; without it the block is one
 * synchronous loop.
 */
import { time } from '@datadog/pprof';
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { setImmediate as turn } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { option } from '../args.js';
import { cpuKernel } from '../overhead/work.js';

const args = process.argv.slice(2);
const rounds = Number(option(args, '--rounds', '20'));
const blockMs = Number(option(args, '--block-ms', '400'));
const intervalMicros = Number(option(args, '--interval-us', '10000'));
const contexts = !args.includes('--no-contexts');
const cpuTime = !args.includes('--no-cpu-time');
const yieldEach = args.includes('--yield');
const across = Number(option(args, '--across', '0'));
/** Internal: one child of `--across`, sampler on or off from its start. */
const child = option(args, '--child', '');
/** One kernel call, as in the service (`unitIterations` of the default routes: ~50 µs). */
const CALL_ITERATIONS = 40_000;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- koffi's handles are untyped
const koffi: any = createRequire(import.meta.url)('koffi');
const clockGettime = koffi.load('libc.so.6').func('int clock_gettime(int, uint8_t *buf)') as (id: number, buf: Buffer) => number;
const tsBuf = Buffer.alloc(16);
/** This thread's CPU time, ns. */
function threadNs(): number {
  clockGettime(3 /* CLOCK_THREAD_CPUTIME_ID */, tsBuf);
  return Number(tsBuf.readBigInt64LE(0)) * 1e9 + Number(tsBuf.readBigInt64LE(8));
}

let sink = 0;
async function block(calls: number): Promise<number> {
  let cpu = 0;
  if (!yieldEach) {
    const t0 = threadNs();
    for (let i = 0; i < calls; i++) sink ^= cpuKernel(CALL_ITERATIONS);
    return threadNs() - t0;
  }
  for (let i = 0; i < calls; i++) {
    await turn();
    const t0 = threadNs();
    sink ^= cpuKernel(CALL_ITERATIONS);
    cpu += threadNs() - t0;
  }
  return cpu;
}

const useCPED = contexts && Number(process.versions.node.split('.')[0]) >= 24;
function startSampler(): void {
  time.start({ intervalMicros, withContexts: contexts, collectCpuTime: cpuTime, useCPED, workaroundV8Bug: false, lineNumbers: false });
  if (contexts) {
    // A context to label with, as spanfuse has inside a span.
    if (useCPED) return;
    time.setContext({ span: 1 });
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** A child of `--across`: the sampler (if on) runs from before the warm-up to the end. */
async function childMain(on: boolean): Promise<void> {
  if (on) startSampler();
  const warmEnd = Date.now() + 1500;
  while (Date.now() < warmEnd) sink ^= cpuKernel(CALL_ITERATIONS);
  const calls = Math.round((blockMs * 1e6) / ((await block(200)) / 200));
  const run = (): Promise<number> => block(calls);
  const ns = (useCPED && on ? await time.runWithContext({ span: 1 }, run) : await run()) / calls;
  if (on) time.stop(false);
  process.stdout.write(JSON.stringify({ ns, sink: sink & 1 }));
}

function acrossMain(): void {
  const pass = args.filter((a, i) => a !== '--across' && args[i - 1] !== '--across');
  const self = fileURLToPath(import.meta.url);
  const got: Record<'on' | 'off', number[]> = { on: [], off: [] };
  for (let i = 0; i < across; i++) {
    for (const kind of i % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
      const out = execFileSync(process.execPath, [self, ...pass, '--child', kind], { encoding: 'utf8' });
      got[kind].push((JSON.parse(out) as { ns: number }).ns / 1000);
    }
  }
  const range = (xs: number[]): string => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`;
  console.log(`node ${process.version}; ${across} processes of each kind, alternating; sampler from start-up, ${intervalMicros} µs, contexts ${contexts ? (useCPED ? 'CPED' : 'setContext') : 'off'}`);
  console.log('| processes | main-thread CPU per kernel call, median µs (min–max) |');
  console.log('|---|---|');
  console.log(`| sampler off | ${median(got.off).toFixed(2)} (${range(got.off)}) |`);
  console.log(`| sampler on from the start | ${median(got.on).toFixed(2)} (${range(got.on)}) |`);
  console.log(`on / off, medians: ×${(median(got.on) / median(got.off)).toFixed(4)}`);
}

async function main(): Promise<void> {
  // Warm up: the kernel optimized, and how many calls fill a block.
  const warmEnd = Date.now() + 1500;
  while (Date.now() < warmEnd) sink ^= cpuKernel(CALL_ITERATIONS);
  const probe = 200;
  const perCallNs = (await block(probe)) / probe;
  const calls = Math.max(10, Math.round((blockMs * 1e6) / perCallNs));

  const ratios: number[] = [];
  const offNs: number[] = [];
  const onNs: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? ['off', 'on'] : ['on', 'off'];
    const got: Record<string, number> = {};
    for (const phase of order) {
      if (phase === 'on') {
        startSampler();
        // Past the start's code logging, which is not the steady cost.
        await new Promise((res) => setTimeout(res, 50));
      }
      const runInSpan = (): Promise<number> => block(calls);
      got[phase] = (useCPED && phase === 'on' ? await time.runWithContext({ span: 1 }, runInSpan) : await runInSpan()) / calls;
      if (phase === 'on') time.stop(false);
    }
    offNs.push(got['off']!);
    onNs.push(got['on']!);
    ratios.push(got['on']! / got['off']!);
  }
  const s = [...ratios].sort((a, b) => a - b);
  const samplesPerCall = (median(onNs) / 1000 / intervalMicros).toFixed(3);
  console.log(
    `node ${process.version}; ${rounds} rounds of ${calls} kernel calls per phase${yieldEach ? ', one call per event-loop turn' : ''}; ` +
      `sampler ${intervalMicros} µs, contexts ${contexts ? (useCPED ? 'CPED' : 'setContext') : 'off'}, CPU time ${cpuTime ? 'on' : 'off'}`,
  );
  console.log('| sampler | main-thread CPU per kernel call, median µs | on / off, median (min–max) |');
  console.log('|---|---|---|');
  console.log(`| off | ${(median(offNs) / 1000).toFixed(2)} | |`);
  console.log(
    `| on | ${(median(onNs) / 1000).toFixed(2)} | ×${median(ratios).toFixed(4)} (${s[0]!.toFixed(4)}–${s[s.length - 1]!.toFixed(4)}) |`,
  );
  console.log(`(${samplesPerCall} samples fall in a call on average; sink ${sink & 1})`);
}

if (child !== '') await childMain(child === 'on');
else if (across > 0) acrossMain();
else await main();
