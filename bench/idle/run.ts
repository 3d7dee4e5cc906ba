/**
 * Fixed cost of an idle process, by thread (issue 11): what spanfuse costs a
 * service that is doing nothing, against no profiler and against
 * @datadog/pprof's wall profiler alone (configured as spanfuse configures it).
 *
 * Each run is a fresh process of bench/idle/app.js; after `--warmup` seconds
 * the CPU time of each of its threads (`/proc/<pid>/task/<tid>/stat`, utime +
 * stime, 10 ms ticks) is read, again after `--seconds`, and the difference is
 * reported in ms of CPU per second, summed by thread name. Configurations are
 * interleaved round by round (order rotated); the table gives medians over
 * rounds (min-max for the total) and the RSS at the end.
 *
 *   node dist/bench/idle/run.js [--rounds 3] [--warmup 25] [--seconds 60]
 *     [--node PATH] [--variant KEY=VALUE ...] [--baseline DIST_DIR] [--json out.json]
 *
 * `--variant KEY=VALUE` adds spanfuse with that environment setting (e.g.
 * SPANFUSE_THREAD_STATE=false); repeatable. `--baseline DIR` adds spanfuse
 * preloaded from another build (e.g. an earlier commit compiled with
 * `tsc --outDir DIR`), to compare before and after. Linux only (reads /proc).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { keyValues, option, repoRootFrom } from '../args.js';

interface Config {
  readonly name: string;
  readonly preload: boolean;
  readonly env: Record<string, string>;
  /** Build folder of the spanfuse to preload (default <repo>/dist). */
  readonly dist?: string;
}

interface Run {
  /** ms of CPU per second, by thread name. */
  readonly byThread: Record<string, number>;
  readonly totalMsPerS: number;
  readonly rssMb: number;
}

const repo = repoRootFrom(import.meta.url);
const args = process.argv.slice(2);
const opt = (name: string, def: string): string => option(args, name, def);
const rounds = Number(opt('--rounds', '3'));
const warmupS = Number(opt('--warmup', '25'));
const seconds = Number(opt('--seconds', '60'));
const nodeBin = opt('--node', join(repo, 'node_modules', 'node', 'bin', 'node'));
const jsonOut = opt('--json', '');
const TICK_MS = 10; // USER_HZ 100 on Linux

const NONE = 'no profiler';
const PPROF = '@datadog/pprof wall profiler alone';
const configs: Config[] = [
  { name: NONE, preload: false, env: {} },
  { name: PPROF, preload: false, env: { IDLE_PPROF: '1' } },
  { name: 'spanfuse defaults', preload: true, env: {} },
];
for (const [k, v] of keyValues(args, '--variant')) configs.push({ name: `spanfuse ${k}=${v}`, preload: true, env: { [k]: v } });

const baseline = opt('--baseline', '');
if (baseline !== '') configs.push({ name: `spanfuse defaults (${baseline})`, preload: true, env: {}, dist: resolve(baseline) });

/** CPU ticks by thread name (threads of the same name summed). */
function threadTicks(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'latin1');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(f[11]) + Number(f[12]); // utime, stime
      out.set(name, (out.get(name) ?? 0) + ticks);
    } catch {
      // the thread exited between the listing and the read
    }
  }
  return out;
}

function rssMb(pid: number): number {
  const m = /^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

async function runOnce(c: Config): Promise<Run> {
  const out = mkdtempSync(join(tmpdir(), 'spanfuse-idle-'));
  const argv = c.preload ? ['--import', join(c.dist ?? join(repo, 'dist'), 'src', 'register.js')] : [];
  argv.push(join(repo, 'dist', 'bench', 'idle', 'app.js'));
  const child = spawn(nodeBin, argv, {
    env: { ...process.env, ...c.env, SPANFUSE_OUTPUT_DIR: out },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr = (stderr + b.toString()).slice(-2000)));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  try {
    const pid = child.pid;
    if (pid === undefined) throw new Error(`${c.name}: spawn failed`);
    await sleep(warmupS * 1000);
    if (child.exitCode !== null) throw new Error(`${c.name}: exited early (${child.exitCode}): ${stderr}`);
    const t0 = threadTicks(pid);
    await sleep(seconds * 1000);
    const t1 = threadTicks(pid);
    const rss = rssMb(pid);
    const byThread: Record<string, number> = {};
    let total = 0;
    for (const [name, ticks] of t1) {
      const ms = ((ticks - (t0.get(name) ?? 0)) * TICK_MS) / seconds;
      byThread[name] = ms;
      total += ms;
    }
    return { byThread, totalMsPerS: total, rssMb: rss };
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(out, { recursive: true, force: true });
  }
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length === 0 ? Number.NaN : s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

const fmt = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : '-');

async function main(): Promise<void> {
  const results = new Map<string, Run[]>(configs.map((c) => [c.name, []]));
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < configs.length; i++) {
      const c = configs[(i + r) % configs.length] as Config;
      const run = await runOnce(c);
      results.get(c.name)?.push(run);
      process.stderr.write(`round ${r + 1} ${c.name}: ${fmt(run.totalMsPerS)} ms CPU/s, RSS ${fmt(run.rssMb)} MB\n`);
    }
  }
  const threads = new Set<string>();
  for (const runs of results.values()) for (const run of runs) for (const t of Object.keys(run.byThread)) threads.add(t);
  // Threads that cost something somewhere, busiest first.
  const cols = [...threads]
    .map((t) => ({ t, max: Math.max(...[...results.values()].flat().map((run) => run.byThread[t] ?? 0)) }))
    .filter((x) => x.max >= 0.5)
    .sort((a, b) => b.max - a.max)
    .map((x) => x.t);
  const lines = [
    `idle bench: ${rounds} interleaved rounds, ${seconds} s measured after ${warmupS} s, ${nodeBin}`,
    'CPU in ms per second of an idle process (one 1 s timer), by thread: medians over rounds;',
    '"over pprof alone": the median of the paired per-round differences in total.',
    '',
    `| configuration | total ms/s (min-max) | over pprof alone | ${cols.join(' | ')} | RSS MB |`,
    `|---|---|---|${cols.map(() => '---|').join('')}---|`,
  ];
  for (const c of configs) {
    const runs = results.get(c.name) ?? [];
    const tot = runs.map((x) => x.totalMsPerS);
    const cells = cols.map((t) => fmt(median(runs.map((x) => x.byThread[t] ?? 0))));
    const pprof = results.get(PPROF) ?? [];
    const over = c.name === PPROF || c.name === NONE ? '' : fmt(median(runs.map((x, i) => x.totalMsPerS - (pprof[i]?.totalMsPerS ?? Number.NaN))));
    lines.push(
      `| ${c.name} | ${fmt(median(tot))} (${fmt(Math.min(...tot))}-${fmt(Math.max(...tot))}) | ${over} | ${cells.join(' | ')} | ${fmt(median(runs.map((x) => x.rssMb)))} |`,
    );
  }
  process.stdout.write(lines.join('\n') + '\n');
  if (jsonOut !== '') writeFileSync(jsonOut, JSON.stringify({ rounds, warmupS, seconds, node: nodeBin, configs, results: Object.fromEntries(results) }, null, 2));
}

await main();
