// What spanfuse adds to Node's own I/O: CPU per `fs.promises.readFile` of a
// 4 KiB file, awaited one after another inside one span (so per-span costs
// vanish and what is left is per I/O operation: four threadpool round trips,
// each a wake-up of the main thread).
//
// Each measurement is a fresh process running one variant:
//   control             BasicTracerProvider + the stock AsyncLocalStorageContextManager
//   control-perf-event  the same plus ONE perf software event (task clock,
//                       counting only) open on the main thread, as spanfuse
//                       opened three by default until 2026-12-06
//   spanfuse            spanfuse start() at defaults
//   spanfuse-perf-events  spanfuse with SPANFUSE_PERF_EVENTS=true (hardware
//                       counters where a PMU exists; none open without one)
// Rounds interleave the variants (order rotated each round); the table gives
// µs per readFile (process CPU, all threads; and wall) as the median over
// rounds of each process's median of five segments, the difference to the
// control of the same round, and how many perf event fds the process held.
// Run (after `npm run build`), pinned to one core like a busy service:
//   taskset -c 0 node dist/bench/io/readfile.js [--rounds 7] [--ops 20000]
//        [--variants control,control-perf-event,spanfuse,spanfuse-perf-events] [--node /path/to/node]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, option } from '../args.js';
import { runRounds } from '../rounds.js';
import { registerOtelControl } from '../overhead/otel-control.js';

const VARIANTS = ['control', 'control-perf-event', 'spanfuse', 'spanfuse-perf-events'] as const;
type VariantName = (typeof VARIANTS)[number];

interface ChildResult {
  readonly variant: VariantName;
  readonly cpuNsPerOp: number;
  readonly wallNsPerOp: number;
  readonly perfFds: number;
}

const argv = process.argv.slice(2);
const opt = (name: string, dflt: string): string => option(argv, `--${name}`, dflt);

async function child(variant: VariantName, ops: number, file: string): Promise<void> {
  const api = await import('@opentelemetry/api');
  let stop: () => Promise<void> = () => Promise.resolve();
  if (variant === 'control' || variant === 'control-perf-event') {
    await registerOtelControl();
    if (variant === 'control-perf-event') {
      const { PerfGroup, SOFTWARE_EVENTS } = await import('../../src/runtime/perf-events.js');
      const g = PerfGroup.open(SOFTWARE_EVENTS.slice(0, 1));
      if (g.group === undefined) throw new Error(`no perf event: ${JSON.stringify(g.unsupported)}`);
      const group = g.group;
      stop = () => {
        group.close();
        return Promise.resolve();
      };
    }
  } else {
    const { start } = await import('../../src/index.js');
    const sf = start();
    if (sf === undefined) throw new Error('spanfuse did not start');
    // The runtime stage opens its counters asynchronously after start().
    await new Promise((r) => setTimeout(r, 500));
    stop = () => sf.shutdown();
  }
  const tracer = api.trace.getTracer('io');
  const batch = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) await readFile(file);
  };
  const inSpan = (n: number): Promise<void> =>
    tracer.startActiveSpan('io', async (span) => {
      try {
        await batch(n);
      } finally {
        span.end();
      }
    });
  await inSpan(Math.min(5000, ops));
  const seg = Math.ceil(ops / 5);
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let s = 0; s < 5; s++) {
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    await inSpan(seg);
    const t1 = process.hrtime.bigint();
    const c1 = process.cpuUsage(c0);
    cpu.push(((c1.user + c1.system) * 1000) / seg);
    wall.push(Number(t1 - t0) / seg);
  }
  const { perfEventFdCount } = await import('../../src/runtime/perf-events.js');
  const perfFds = perfEventFdCount();
  await stop();
  const res: ChildResult = { variant, cpuNsPerOp: median(cpu), wallNsPerOp: median(wall), perfFds };
  process.stdout.write(JSON.stringify(res) + '\n');
}

function parent(): void {
  const rounds = Number(opt('rounds', '7'));
  const ops = Number(opt('ops', '20000'));
  const variants = opt('variants', VARIANTS.join(',')).split(',') as VariantName[];
  for (const v of variants) if (!VARIANTS.includes(v)) throw new Error(`unknown variant ${v} (known: ${VARIANTS.join(', ')})`);
  const node = opt('node', process.execPath);
  const self = fileURLToPath(import.meta.url);
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-io-'));
  const file = join(dir, 'data.bin');
  writeFileSync(file, Buffer.alloc(4096, 7));
  let results: Map<VariantName, ChildResult[]>;
  try {
    results = runRounds<VariantName, ChildResult>(
      rounds,
      variants,
      (v, r) => {
        const env: NodeJS.ProcessEnv = {
          ...process.env,
          SPANFUSE_OUTPUT_DIR: join(dir, `${v}-${r}`),
          SPANFUSE_PERF_EVENTS: v === 'spanfuse-perf-events' ? 'true' : 'false',
        };
        // The spanfuse variant runs at the defaults: no override of the switch.
        if (v === 'spanfuse') delete env.SPANFUSE_PERF_EVENTS;
        return { args: [self, '--child', v, '--ops', String(ops), '--file', file], env };
      },
      node,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  console.log(`node ${version}; ${rounds} interleaved rounds, ${ops} sequential readFile calls (4 KiB) measured per process`);
  console.log('| variant | perf event fds | CPU µs/op median (min-max) | wall µs/op median (min-max) | Δ CPU vs control | CPU ratio |');
  console.log('|---|---|---|---|---|---|');
  const control = results.get('control');
  const us = (ns: number): string => (ns / 1000).toFixed(2);
  const stats = (xs: number[]): string => `${us(median(xs))} (${us(Math.min(...xs))}-${us(Math.max(...xs))})`;
  for (const [v, rs] of results) {
    const cpu = rs.map((x) => x.cpuNsPerOp);
    let d = '';
    let ratio = '';
    if (control !== undefined && v !== 'control') {
      const dc = rs.map((x, i) => x.cpuNsPerOp - control[i]!.cpuNsPerOp);
      const rc = rs.map((x, i) => x.cpuNsPerOp / control[i]!.cpuNsPerOp);
      d = `${median(dc) >= 0 ? '+' : ''}${us(median(dc))} (${us(Math.min(...dc))}..${us(Math.max(...dc))})`;
      ratio = `×${median(rc).toFixed(3)} (${Math.min(...rc).toFixed(3)}–${Math.max(...rc).toFixed(3)})`;
    }
    const fds = [...new Set(rs.map((x) => x.perfFds))].join('/');
    console.log(`| ${v} | ${fds} | ${stats(cpu)} | ${stats(rs.map((x) => x.wallNsPerOp))} | ${d} | ${ratio} |`);
  }
}

const ci = argv.indexOf('--child');
if (ci >= 0) await child(argv[ci + 1] as VariantName, Number(opt('ops', '20000')), opt('file', ''));
else parent();
