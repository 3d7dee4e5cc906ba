// Per-span cost of spanfuse over a bare OpenTelemetry SDK.
//
// Each measurement is a fresh process running one variant:
//   control   BasicTracerProvider (no processors) + the stock
//             AsyncLocalStorageContextManager
//   spanfuse  start() at defaults: sampler running, spanfuse's context
//             manager, provider and processors (local root, tail, spans.jsonl)
//   spanfuse-tc  the same with SPANFUSE_THREAD_CONTEXT=true (OTEP-4947)
//   spanfuse-nofile  defaults but SPANFUSE_SPANS_FILE=false (what spans.jsonl costs)
//   spanfuse-state-worker  defaults but SPANFUSE_THREAD_STATE_HOST=worker (thread-state
//             passes in a worker of their own, the default before 2026-12-04)
//   spanfuse-notail  defaults but SPANFUSE_SPANS_FILE=false and SPANFUSE_TAIL_ENABLED=false
//             (with spanfuse-nofile: what tail detection costs)
//   spanfuse-hooks-clear  defaults but SPANFUSE_CLEAR_CONTEXT_BETWEEN_CALLBACKS=true (without
//             AsyncContextFrame: the span slot cleared after every callback, the default
//             up to 6e7e4cb)
// The loop: startActiveSpan -> await (resolved promise) -> end, sequential,
// with a turn of the event loop (setImmediate) every 64 spans.
// Rounds interleave the variants (order rotated each round); the table gives
// per-span µs (median / min / max over rounds) of wall time and of process
// CPU time (all threads: includes the sampler's and V8's profiler threads).
// `--reenter N`: inside each span, enter its Context N more times (an
// instrumented HTTP request is entered 6 times: the server span's `with` and
// its bound request/response listeners), in every variant.
// Run (after `npm run build`):
//   node dist/bench/spans/per-span.js [--rounds 9] [--spans 100000]
//        [--variants control,spanfuse,spanfuse-tc,spanfuse-nofile,spanfuse-state-worker,spanfuse-notail,spanfuse-hooks-clear] [--node-arg=--no-async-context-frame]
//        [--node /path/to/node] [--reenter 5]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, option } from '../args.js';
import { runRounds } from '../rounds.js';
import { registerOtelControl } from '../overhead/otel-control.js';

const VARIANTS = [
  'control',
  'spanfuse',
  'spanfuse-tc',
  'spanfuse-nofile',
  'spanfuse-state-worker',
  'spanfuse-notail',
  'spanfuse-hooks-clear',
] as const;
type VariantName = (typeof VARIANTS)[number];

interface ChildResult {
  readonly variant: VariantName;
  readonly wallNsPerSpan: number;
  readonly cpuNsPerSpan: number;
  /** Main thread only (Node >= 23.9 has process.threadCpuUsage), else NaN. */
  readonly mainCpuNsPerSpan: number;
  readonly mode: string;
  readonly threadContext: boolean;
  readonly labelled: number;
}

const argv = process.argv.slice(2);
const opt = (name: string, dflt: string): string => option(argv, `--${name}`, dflt);
/** Entries of each span's Context after the first (`--reenter N`). */
const reenter = Number(opt('reenter', '0'));

async function child(variant: VariantName, spans: number): Promise<void> {
  const api = await import('@opentelemetry/api');
  let info = { mode: 'none', threadContext: false, labelled: () => 0 };
  let stop: () => Promise<void> = () => Promise.resolve();
  if (variant === 'control') {
    await registerOtelControl();
  } else {
    const { start } = await import('../../src/index.js');
    const sf = start();
    if (sf === undefined) throw new Error('spanfuse did not start');
    info = { mode: sf.mode, threadContext: sf.stats().runtime?.threadContext === 'active', labelled: () => sf.stats().windows.labelledSamples };
    stop = () => sf.shutdown();
  }
  const tracer = api.trace.getTracer('per-span');
  const listener = (): number => 0;
  const one = (): Promise<void> =>
    tracer.startActiveSpan('op', async (span) => {
      const ctx = api.context.active();
      for (let k = 0; k < reenter; k++) api.context.with(ctx, listener);
      await Promise.resolve();
      span.end();
    });
  const run = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) {
      await one();
      // Let timers and I/O run, as a service's event loop would.
      if ((i & 63) === 63) await new Promise((r) => setImmediate(r));
    }
  };
  await run(Math.min(50_000, spans));
  // Five segments; the median segment is the process's figure.
  const seg = Math.ceil(spans / 5);
  const wall: number[] = [];
  const cpu: number[] = [];
  const main: number[] = [];
  const threadCpu = (process as { threadCpuUsage?: (prev?: NodeJS.CpuUsage) => NodeJS.CpuUsage }).threadCpuUsage;
  for (let s = 0; s < 5; s++) {
    const m0 = threadCpu?.call(process);
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    await run(seg);
    const t1 = process.hrtime.bigint();
    const c1 = process.cpuUsage(c0);
    const m1 = m0 === undefined ? undefined : threadCpu?.call(process, m0);
    wall.push(Number(t1 - t0) / seg);
    cpu.push(((c1.user + c1.system) * 1000) / seg);
    main.push(m1 === undefined ? Number.NaN : ((m1.user + m1.system) * 1000) / seg);
  }
  await stop();
  const res: ChildResult = {
    variant,
    wallNsPerSpan: median(wall),
    cpuNsPerSpan: median(cpu),
    mainCpuNsPerSpan: median(main),
    mode: info.mode,
    threadContext: info.threadContext,
    labelled: info.labelled(),
  };
  process.stdout.write(JSON.stringify(res) + '\n');
}

function parent(): void {
  const rounds = Number(opt('rounds', '9'));
  const spans = Number(opt('spans', '100000'));
  const variants = opt('variants', VARIANTS.join(',')).split(',') as VariantName[];
  const node = opt('node', process.execPath);
  const nodeArgs = argv.filter((a) => a.startsWith('--node-arg=')).map((a) => a.slice('--node-arg='.length));
  const self = fileURLToPath(import.meta.url);
  const out = mkdtempSync(join(tmpdir(), 'spanfuse-per-span-'));
  let results: Map<VariantName, ChildResult[]>;
  try {
    results = runRounds<VariantName, ChildResult>(
      rounds,
      variants,
      (v, r) => ({
        args: [...nodeArgs, self, '--child', v, '--spans', String(spans), '--reenter', String(reenter)],
        env: {
          ...process.env,
          SPANFUSE_OUTPUT_DIR: join(out, `${v}-${r}`),
          SPANFUSE_THREAD_CONTEXT: v === 'spanfuse-tc' ? 'true' : 'false',
          SPANFUSE_SPANS_FILE: v === 'spanfuse-nofile' || v === 'spanfuse-notail' ? 'false' : 'true',
          SPANFUSE_TAIL_ENABLED: v === 'spanfuse-notail' ? 'false' : 'true',
          SPANFUSE_THREAD_STATE_HOST: v === 'spanfuse-state-worker' ? 'worker' : 'main',
          SPANFUSE_CLEAR_CONTEXT_BETWEEN_CALLBACKS: v === 'spanfuse-hooks-clear' ? 'true' : 'false',
        },
      }),
      node,
    );
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  report(results, { rounds, spans, node, nodeArgs });
}

function report(results: Map<VariantName, ChildResult[]>, o: { rounds: number; spans: number; node: string; nodeArgs: string[] }): void {
  const version = spawnSync(o.node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  const entries = reenter > 0 ? `, each span's Context entered ${reenter + 1} times` : '';
  console.log(`node ${version} ${o.nodeArgs.join(' ')}; ${o.rounds} interleaved rounds, ${o.spans} spans measured per process${entries}`);
  console.log('| variant | mode | wall µs/span median (min-max) | CPU µs/span median (min-max) | main-thread CPU µs/span | Δ wall vs control | Δ CPU vs control | Δ main-thread CPU |');
  console.log('|---|---|---|---|---|---|---|---|');
  const control = results.get('control');
  const us = (ns: number): string => (ns / 1000).toFixed(2);
  const stats = (xs: number[]): string => `${us(median(xs))} (${us(Math.min(...xs))}-${us(Math.max(...xs))})`;
  for (const [v, rs] of results) {
    const wall = rs.map((x) => x.wallNsPerSpan);
    const cpu = rs.map((x) => x.cpuNsPerSpan);
    const mainCpu = rs.map((x) => x.mainCpuNsPerSpan);
    const hasMain = mainCpu.every((x) => Number.isFinite(x));
    let dWall = '';
    let dCpu = '';
    let dMain = '';
    if (control !== undefined && v !== 'control') {
      // Per-round differences (the control of the same round), then their median.
      const dw = rs.map((x, i) => x.wallNsPerSpan - control[i]!.wallNsPerSpan);
      const dc = rs.map((x, i) => x.cpuNsPerSpan - control[i]!.cpuNsPerSpan);
      dWall = `+${us(median(dw))} (${us(Math.min(...dw))}..${us(Math.max(...dw))})`;
      dCpu = `+${us(median(dc))} (${us(Math.min(...dc))}..${us(Math.max(...dc))})`;
      if (hasMain) {
        const dm = rs.map((x, i) => x.mainCpuNsPerSpan - control[i]!.mainCpuNsPerSpan);
        dMain = `+${us(median(dm))} (${us(Math.min(...dm))}..${us(Math.max(...dm))})`;
      }
    }
    const mode = rs[0] === undefined ? '' : `${rs[0].mode}${rs[0].threadContext ? ' +thread ctx' : ''}`;
    console.log(`| ${v} | ${mode} | ${stats(wall)} | ${stats(cpu)} | ${hasMain ? stats(mainCpu) : 'n/a'} | ${dWall} | ${dCpu} | ${dMain || (hasMain ? '' : 'n/a')} |`);
  }
}

const ci = argv.indexOf('--child');
if (ci >= 0) await child(argv[ci + 1] as VariantName, Number(opt('spans', '100000')));
else parent();
