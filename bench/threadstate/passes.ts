// Time of one thread-state pass on the main thread (`threadStateHost:
// 'main'`, the default), which the event loop waits for. Variants:
//   proc        the host thread's own switches and faults read from /proc
//               status and stat (the way up to 2026-12-06 and the fallback
//               without koffi), every thread visited at every pass
//   getrusage   the same counters from one getrusage call (the default where
//               koffi loads), every thread visited at every pass
//   idle-skip   getrusage, and idle threadpool threads visited only every
//               4th pass (runtime.threadStateIdleEvery; the default since
//               2026-12-06 21Z)
//
// Each measurement is a fresh process: the sampler at `--hz` on this thread,
// a load of 1 ms JS turns for `--seconds`; with `--pool busy` (default) two
// `fs.stat` calls on the threadpool between them (so the threadpool threads
// are scheduled and re-read), with `--pool idle` none (a service that does
// no file work: its threadpool waits). The threadpool's threads are named
// first, as spanfuse names them, so the default thread set tracks them.
// Rounds interleave the variants; the table gives µs per pass
// (`stats().selfTime.passesMs` over the passes run) as the median over
// rounds, and the difference to the first variant listed in the same round.
//   node dist/bench/threadstate/passes.js [--rounds 7] [--seconds 10] [--hz 10] [--pool busy|idle]
//        [--variants proc,getrusage,idle-skip] [--node /path/to/node]
import { spawnSync } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { median, option } from '../args.js';
import { runRounds } from '../rounds.js';

const VARIANTS = ['proc', 'getrusage', 'idle-skip'] as const;
type VariantName = (typeof VARIANTS)[number];

interface ChildResult {
  readonly tracked: number;
  readonly passes: number;
  readonly passesMs: number;
  readonly longestMs: number;
}

const argv = process.argv.slice(2);
const opt = (name: string, dflt: string): string => option(argv, `--${name}`, dflt);

async function child(variant: VariantName, seconds: number, hz: number, pool: string): Promise<void> {
  const { ThreadStateSampler } = await import('../../src/runtime/thread-state-sampler.js');
  const { ThreadCounterReader } = await import('../../src/runtime/thread-stats.js');
  const { detectPlatform } = await import('../../src/runtime/platform.js');
  const { Diagnostics } = await import('../../src/core/diagnostics.js');
  const { selfTimeTotals } = await import('../../src/core/self-time.js');
  const { ThreadInventory } = await import('../../src/runtime/threads.js');
  await new ThreadInventory().nameThreadpool(4);
  const reader = new ThreadCounterReader();
  if (variant !== 'proc' && reader.source !== 'getrusage') throw new Error('koffi getrusage unavailable');
  const sampler = new ThreadStateSampler({
    hz,
    arch: detectPlatform().arch,
    diagnostics: new Diagnostics(() => undefined),
    host: 'main',
    hostCounters: variant !== 'proc' ? (out) => reader.readSwitchesAndFaults(out) : undefined,
    // idle-skip: the sampler's default.
    ...(variant === 'idle-skip' ? {} : { idleEvery: 1 }),
  });
  if (!(await sampler.start())) throw new Error('thread-state sampler did not start');
  const end = Date.now() + seconds * 1000;
  const spin = (ms: number): void => {
    const t = performance.now();
    while (performance.now() - t < ms);
  };
  const mark = selfTimeTotals();
  const passes0 = sampler.stats().passes;
  while (Date.now() < end) {
    spin(1);
    if (pool === 'busy') await Promise.all([stat(process.execPath), stat(fileURLToPath(import.meta.url))]);
    await new Promise((r) => setImmediate(r));
  }
  const after = selfTimeTotals();
  const res: ChildResult = {
    tracked: sampler.reader?.snapshot().size ?? 0,
    passes: sampler.stats().passes - passes0,
    passesMs: after.passesMs - mark.passesMs,
    longestMs: after.longestMs.passes,
  };
  await sampler.stop();
  process.stdout.write(JSON.stringify(res) + '\n');
}

function parent(): void {
  const rounds = Number(opt('rounds', '7'));
  const seconds = Number(opt('seconds', '10'));
  const hz = Number(opt('hz', '10'));
  const pool = opt('pool', 'busy');
  if (pool !== 'busy' && pool !== 'idle') throw new Error(`--pool: expected busy or idle, got ${pool}`);
  const variants = opt('variants', VARIANTS.join(',')).split(',') as VariantName[];
  for (const v of variants) if (!VARIANTS.includes(v)) throw new Error(`unknown variant ${v} (known: ${VARIANTS.join(', ')})`);
  const node = opt('node', process.execPath);
  const self = fileURLToPath(import.meta.url);
  const results = runRounds<VariantName, ChildResult>(
    rounds,
    variants,
    (v) => ({ args: [self, '--child', v, '--seconds', String(seconds), '--hz', String(hz), '--pool', pool], env: process.env }),
    node,
  );
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  const base = variants[0] as VariantName;
  console.log(`node ${version}; ${rounds} interleaved rounds of ${seconds} s, passes at ${hz} Hz on the main thread, threadpool ${pool}`);
  console.log(`| variant | threads tracked | passes per process | µs per pass median (min-max) | Δ vs ${base} | longest pass ms (median) |`);
  console.log('|---|---|---|---|---|---|');
  const perPass = (x: ChildResult): number => (x.passesMs * 1000) / Math.max(1, x.passes);
  const first = results.get(base)!;
  for (const [v, rs] of results) {
    const us = rs.map(perPass);
    let d = '';
    if (v !== base) {
      const ds = rs.map((x, i) => perPass(x) - perPass(first[i]!));
      d = `${median(ds) >= 0 ? '+' : ''}${median(ds).toFixed(1)} (${Math.min(...ds).toFixed(1)}..${Math.max(...ds).toFixed(1)})`;
    }
    const passes = median(rs.map((x) => x.passes));
    console.log(`| ${v} | ${median(rs.map((x) => x.tracked))} | ${passes} | ${median(us).toFixed(1)} (${Math.min(...us).toFixed(1)}-${Math.max(...us).toFixed(1)}) | ${d} | ${median(rs.map((x) => x.longestMs)).toFixed(2)} |`);
  }
}

const ci = argv.indexOf('--child');
if (ci >= 0) await child(argv[ci + 1] as VariantName, Number(opt('seconds', '10')), Number(opt('hz', '10')), opt('pool', 'busy'));
else parent();
