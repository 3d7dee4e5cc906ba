/**
 * CPU cost of the thread-state sampler. Each run is a fresh child process,
 * idle or under load, with the sampler off or on at a rate; runs of one round
 * are interleaved in shuffled order so drift hits every variant alike.
 * Reports, per variant (median over rounds):
 * - the sampler thread's own CPU (its /proc schedstat on-CPU time) as % of
 *   one core: the direct figure;
 * - process CPU on minus process CPU off in the same round, as % of one core:
 *   the side-by-side figure (noisier; includes the worker's share of GC).
 *
 *   node .build/runtime/bench/threadstate/run.js [--rounds 5] [--seconds 5] [--rates 10,20,50]
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { stat } from 'node:fs';
import { ThreadStateSampler } from '../../src/runtime/thread-state-sampler.js';
import { ThreadInventory } from '../../src/runtime/threads.js';
import { detectPlatform } from '../../src/runtime/platform.js';
import { Diagnostics } from '../../src/core/diagnostics.js';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? dflt) : dflt;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface ChildResult {
  readonly cpuNs: number;
  readonly wallNs: number;
  readonly samplerNs: number;
  readonly threads: number;
}

/**
 * A fixed amount of work every 20 ms (about half of one core here) plus 8
 * threadpool stats, so process CPU on vs off differs only by the sampler.
 */
let sink = 0;
async function load(untilMs: number): Promise<void> {
  while (Date.now() < untilMs) {
    for (let i = 0; i < 2_000_000; i++) sink = (sink + i) % 1_000_003;
    for (let i = 0; i < 8; i++) stat('/proc/self', () => undefined);
    await sleep(10);
  }
}

function schedstatNs(tid: number): number {
  try {
    return Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'latin1').split(' ')[0]);
  } catch {
    return 0;
  }
}

async function child(mode: string, hz: number, loaded: boolean, seconds: number): Promise<void> {
  let sampler: ThreadStateSampler | undefined;
  // As RuntimeSignals does: name the pool so the sampler ('app' threads) finds it.
  await new ThreadInventory().nameThreadpool(4);
  if (mode === 'on') {
    sampler = new ThreadStateSampler({ hz, arch: detectPlatform().arch, diagnostics: new Diagnostics() });
    if (!(await sampler.start())) throw new Error('sampler did not start');
  }
  // Warm up: JIT, threadpool, sampler's thread list.
  await (loaded ? load(Date.now() + 500) : sleep(500));
  const tid = sampler?.stats().samplerTid ?? 0;
  const c0 = process.cpuUsage();
  const s0 = tid > 0 ? schedstatNs(tid) : 0;
  const w0 = process.hrtime.bigint();
  await (loaded ? load(Date.now() + seconds * 1000) : sleep(seconds * 1000));
  const c1 = process.cpuUsage(c0);
  const s1 = tid > 0 ? schedstatNs(tid) : 0;
  const result: ChildResult = {
    cpuNs: (c1.user + c1.system) * 1000,
    wallNs: Number(process.hrtime.bigint() - w0),
    samplerNs: s1 - s0,
    threads: Number(/Threads:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'latin1'))?.[1] ?? 0),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  await sampler?.stop();
}

function runChild(mode: string, hz: number, loaded: boolean, seconds: number): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [process.argv[1] ?? '', '--child', mode, String(hz), loaded ? 'load' : 'idle', String(seconds)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.on('exit', (code) => {
      if (code !== 0) reject(new Error(`child exited ${code}`));
      else resolve(JSON.parse(out.trim()) as ChildResult);
    });
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] ?? 0) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
}

function shuffle<T>(xs: T[]): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [xs[i], xs[j]] = [xs[j] as T, xs[i] as T];
  }
  return xs;
}

async function parent(): Promise<void> {
  const rounds = Number(arg('rounds', '5'));
  const seconds = Number(arg('seconds', '5'));
  const rates = arg('rates', '10,20,50').split(',').map(Number);
  console.log(`thread-state sampler cost: ${rounds} rounds x ${seconds} s, node ${process.version}, ${process.arch}`);
  for (const loaded of [false, true]) {
    const variants = ['off', ...rates.map((r) => `on@${r}`)];
    const direct = new Map<string, number[]>();
    const diff = new Map<string, number[]>();
    const threads = new Map<string, number>();
    for (let r = 0; r < rounds; r++) {
      const results = new Map<string, ChildResult>();
      for (const v of shuffle([...variants])) {
        const [mode, hz] = v === 'off' ? ['off', 0] : ['on', Number(v.slice(3))];
        results.set(v, await runChild(mode, hz, loaded, seconds));
      }
      const off = results.get('off');
      for (const v of variants) {
        const res = results.get(v);
        if (!res || !off) continue;
        threads.set(v, res.threads);
        if (v === 'off') continue;
        (direct.get(v) ?? direct.set(v, []).get(v) ?? []).push((100 * res.samplerNs) / res.wallNs);
        (diff.get(v) ?? diff.set(v, []).get(v) ?? []).push((100 * (res.cpuNs / res.wallNs - off.cpuNs / off.wallNs)));
      }
    }
    console.log(`\n${loaded ? 'under load (fixed JS work every ~20 ms on main + 8 threadpool stats)' : 'idle'}:`);
    for (const v of variants.slice(1)) {
      const d = direct.get(v) ?? [];
      const x = diff.get(v) ?? [];
      console.log(
        `  ${v.padEnd(7)} sampler thread ${median(d).toFixed(3)}% of one core (min ${Math.min(...d).toFixed(3)}, max ${Math.max(...d).toFixed(3)}); ` +
          `process on-off ${median(x).toFixed(3)}% (min ${Math.min(...x).toFixed(3)}, max ${Math.max(...x).toFixed(3)}); threads ${threads.get(v)}`,
      );
    }
  }
}

if (process.argv[2] === '--child') {
  await child(process.argv[3] ?? 'off', Number(process.argv[4]), process.argv[5] === 'load', Number(process.argv[6]));
} else {
  await parent();
}
