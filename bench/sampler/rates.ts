/**
 * The floor under every V8-sampler profiler: what @datadog/pprof's wall
 * sampler alone (the one spanfuse builds on, with spanfuse's options: contexts,
 * CPU time, CPED on Node >= 24) costs per sample, at several rates, on a fixed
 * amount of work. No tracing, no spans, no spanfuse code.
 *
 * Each run is a fresh process that does the same work (a fixed number of
 * iterations of a 24-frame-deep call chain doing integer and JSON work, in
 * ~5 ms slices with a `setImmediate` between them, as a service's event loop
 * would) with the sampler off or at one rate, stopping the native profile
 * every second as spanfuse does (its chunk and window stops, converted to
 * pprof and dropped). Rates run interleaved round by round. The process's
 * CPU (all threads: V8's profiler thread included) over the work, against
 * the sampler-off run of the same round, gives the overhead in % and per
 * sample (µs). `--v8` adds V8's CPU profiler alone at the same rates
 * (through the inspector, stopped and restarted every second), to tell
 * V8's share from @datadog/pprof's. spanfuse's own cost is not here: it has fixed parts that do
 * not scale with the rate and need a warmed-up process (its window code is
 * compiled during the first windows); bench/overhead measures it.
 *
 *   node dist/bench/sampler/rates.js [--rounds 5] [--hz 0,20,50,100,200] [--work-ms 4000]
 *     [--node PATH] [--pin CPUS] [--v8]
 *
 * Each child runs under `taskset -c 0` unless `--pin ''` (or other CPUs).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { option, repoRootFrom } from '../args.js';
import { median } from '../heap/harness.js';
import { cpuKernel } from '../overhead/work.js';

interface RunResult {
  readonly cpuMs: number;
  readonly wallMs: number;
  readonly samples: number;
}

const DEPTH = 24;

/** A call chain `DEPTH` frames deep (distinct functions, so stacks are realistic), ending in the work. */
function makeChain(): (n: number) => number {
  let next = (n: number): number => {
    const h = cpuKernel(n);
    return h ^ JSON.stringify({ h, n, s: 'x'.repeat(h & 15) }).length;
  };
  for (let d = 0; d < DEPTH; d++) {
    const inner = next;
    // eslint-disable-next-line @typescript-eslint/no-implied-eval
    next = new Function('inner', `return function level_${d}(n) { return inner(n) + ${d}; }`)(inner) as (n: number) => number;
  }
  return next;
}

/** Iterations of the chain for about `ms` of CPU, measured once in the parent. */
function calibrate(chain: (n: number) => number, ms: number): number {
  let n = 200;
  for (;;) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) chain(2000);
    const dt = Number(process.hrtime.bigint() - t0) / 1e6;
    if (dt > 200) return Math.max(1, Math.round((n * ms) / dt));
    n *= 2;
  }
}

async function child(hz: number, calls: number, v8Only: boolean): Promise<void> {
  const chain = makeChain();
  const { setImmediate: tick } = await import('node:timers/promises');
  let samples = 0;
  let stop: (() => void) | undefined;
  if (hz > 0 && v8Only) {
    // V8's CPU profiler alone, through the inspector: no @datadog/pprof.
    const { Session } = await import('node:inspector/promises');
    const session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: Math.round(1e6 / hz) });
    await session.post('Profiler.start');
    const count = (p: { samples?: number[] }): void => {
      samples += p.samples?.length ?? 0;
    };
    const timer = setInterval(() => {
      void session.post('Profiler.stop').then(({ profile }) => {
        count(profile as { samples?: number[] });
        return session.post('Profiler.start');
      });
    }, 1000);
    stop = () => {
      clearInterval(timer);
      void session.post('Profiler.stop').then(({ profile }) => count(profile as { samples?: number[] }));
    };
  } else if (hz > 0) {
    const { time } = await import('@datadog/pprof');
    const cped = Number(process.versions.node.split('.')[0]) >= 24;
    time.start({ intervalMicros: Math.round(1e6 / hz), withContexts: true, collectCpuTime: true, useCPED: cped, workaroundV8Bug: false, lineNumbers: false });
    // Samples without a context are aggregated per stack: count their hits.
    const count = (p: { sample: { value: unknown[] }[] }): void => {
      for (const x of p.sample) samples += Number(x.value[0] ?? 0);
    };
    const timer = setInterval(() => count(time.stop(true)), 1000);
    stop = () => {
      clearInterval(timer);
      count(time.stop(false));
    };
  }
  // Warm up the chain (compiled before the measure starts).
  for (let i = 0; i < 200; i++) chain(2000);
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const slice = Math.max(1, Math.round(calls / 800));
  let acc = 0;
  for (let done = 0; done < calls; done += slice) {
    for (let i = 0; i < slice; i++) acc ^= chain(2000);
    await tick();
  }
  const c = process.cpuUsage(c0);
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  stop?.();
  const out: RunResult = { cpuMs: (c.user + c.system) / 1000, wallMs, samples };
  process.stdout.write(`${JSON.stringify({ ...out, acc: acc & 1 })}\n`);
}


function parent(args: readonly string[]): void {
  const repo = repoRootFrom(import.meta.url);
  const rounds = Number(option(args, '--rounds', '5'));
  const rates = option(args, '--hz', '0,20,50,100,200').split(',').map(Number);
  if (!rates.includes(0)) rates.unshift(0);
  const workMs = Number(option(args, '--work-ms', '4000'));
  const nodeBin = option(args, '--node', process.execPath);
  // One core for the whole process (V8's profiler thread included), as the
  // HTTP bench pins its server: less run-to-run spread from migrations.
  const pin = option(args, '--pin', '0');
  const calls = calibrate(makeChain(), workMs);
  const cases = rates.map((hz) => ({ name: hz === 0 ? 'off' : `pprof ${hz} Hz`, hz, v8: false }));
  if (args.includes('--v8')) for (const hz of rates) if (hz > 0) cases.push({ name: `V8 alone ${hz} Hz`, hz, v8: true });
  const results = new Map<string, RunResult[]>(cases.map((c) => [c.name, []]));
  const self = join(repo, 'dist', 'bench', 'sampler', 'rates.js');
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? cases : [...cases].reverse();
    for (const c of order) {
      const cmd = pin === '' ? [nodeBin] : ['taskset', '-c', pin, nodeBin];
      const p = spawnSync(cmd[0] as string, [...cmd.slice(1), self, '--child', String(c.hz), String(calls), c.v8 ? 'v8' : 'pprof'], { cwd: repo, encoding: 'utf8', timeout: workMs * 10 + 60_000 });
      if (p.status !== 0) throw new Error(`${c.name}: exit ${String(p.status)}\n${p.stderr.slice(-2000)}`);
      const line = p.stdout.trim().split('\n').pop() ?? '';
      results.get(c.name)?.push(JSON.parse(line) as RunResult);
      process.stderr.write(`round ${r + 1} ${c.name}: ${line}\n`);
    }
  }
  const off = results.get('off') ?? [];
  console.log(`sampler rates bench: ${rounds} interleaved rounds, ${calls} calls (~${workMs} ms of work), ${nodeBin} (${spawnSync(nodeBin, ['--version'], { encoding: 'utf8' }).stdout.trim()})`);
  console.log('Per round: process CPU (all threads) over the work, against the sampler-off run of the same round. Median (min–max) of rounds.');
  console.log('| case | CPU ms | samples | overhead % | µs per sample |');
  console.log('|---|---|---|---|---|');
  const fmt = (xs: number[], d: number): string => `${median(xs).toFixed(d)} (${Math.min(...xs).toFixed(d)}–${Math.max(...xs).toFixed(d)})`;
  for (const c of cases) {
    const rs = results.get(c.name) ?? [];
    const over = rs.map((x, i) => (100 * (x.cpuMs - (off[i]?.cpuMs ?? NaN))) / (off[i]?.cpuMs ?? NaN));
    const perSample = rs.map((x, i) => (x.samples > 0 ? (1000 * (x.cpuMs - (off[i]?.cpuMs ?? NaN))) / x.samples : NaN));
    console.log(
      `| ${c.name} | ${fmt(
        rs.map((x) => x.cpuMs),
        0,
      )} | ${median(rs.map((x) => x.samples)).toFixed(0)} | ${c.hz === 0 ? '–' : fmt(over, 2)} | ${c.hz === 0 ? '–' : fmt(perSample, 1)} |`,
    );
  }
}

const argv = process.argv.slice(2);
if (argv[0] === '--child') await child(Number(argv[1]), Number(argv[2]), argv[3] === 'v8');
else parent(argv);
