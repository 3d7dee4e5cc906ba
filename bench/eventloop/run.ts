/**
 * Event-loop stalls and memory under span load (issue 11, items 2 and 4).
 *
 * Runs bench/eventloop/app.js in fresh processes, the OTel-traced control and
 * spanfuse (preloaded with `--import`, defaults unless told) interleaved
 * round by round, and reports per configuration the largest gap between 1 ms
 * timer ticks (in all, and from 5 s on, after start-up), the p99 and p99.9
 * gap, gaps over 5 ms, and RSS at the start and end of the run; then
 * spanfuse's own record of its longest blocks (`stats().selfTime`).
 * `--big-window` adds a spanfuse case whose windows hold ~60,000 samples
 * (200 µs sampling, 12 s windows).
 *
 *   node dist/bench/eventloop/run.js [--rounds 3] [--seconds 25] [--node PATH]
 *     [--big-window] [--baseline DIST_DIR] [--env KEY=VALUE ...] [--variant KEY=VALUE ...]
 *     [--node-arg FLAG ...] [--json out.json]
 *
 * `--node-arg FLAG` (repeatable) passes FLAG to node in every configuration,
 * e.g. `--node-arg --no-maglev` to run without V8's mid-tier compiler.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { median, option, options, repoRootFrom } from '../args.js';
import { appConfigs, runApp } from './configs.js';
import type { AppConfig } from './configs.js';

interface Result {
  spans: number;
  spansPerSecond: number;
  maxGapMs: number;
  p99GapMs: number;
  p999GapMs: number;
  maxCpuGapMs: number;
  p99CpuGapMs: number;
  p999CpuGapMs: number;
  gapsOver5Ms: number;
  cpuGapsOver5Ms: number;
  steadyMs?: number;
  maxCpuGapSteadyMs?: number;
  selfTime?: {
    longestMs?: Record<string, number>;
    stagesLongestStepMs?: Record<string, number>;
  };
  bigGaps: { atMs: number; gapMs: number; cpuMs: number }[];
  memory: { atMs: number; rssMb: number; heapMb: number; heapTotalMb: number; externalMb: number; spaces: Record<string, number> }[];
  cpuMs: number;
}

const repo = repoRootFrom(import.meta.url);
const args = process.argv.slice(2);
const opt = (name: string, def: string): string => option(args, name, def);
const rounds = Number(opt('--rounds', '3'));
const seconds = Number(opt('--seconds', '25'));
const nodeBin = opt('--node', join(repo, 'node_modules', 'node', 'bin', 'node'));
const jsonOut = opt('--json', '');
const nodeArgs = options(args, '--node-arg');

// The control, spanfuse, `--variant KEY=VALUE` (repeatable, e.g.
// SPANFUSE_THREAD_STATE=false), `--baseline DIR` (another build of
// spanfuse, e.g. the main branch compiled with `tsc --outDir DIR`) and,
// with `--big-window`, both spanfuse builds with ~60,000-sample windows.
const bigWindow = { name: '60k-sample window', env: { SPANFUSE_SAMPLING_INTERVAL_US: '200', SPANFUSE_WINDOW_MS: '12000' } };
const configs: AppConfig[] = appConfigs(args, args.includes('--big-window') ? [bigWindow] : []);

async function runOnce(c: AppConfig): Promise<Result> {
  const stdout = await runApp(c, { repo, nodeBin, seconds, nodeArgs });
  const line = stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line) as Result;
  } catch (err) {
    throw new Error(`${c.name}: ${String(err)}`);
  }
}

const r1 = (x: number): number => Math.round(x * 10) / 10;
const spread = (xs: number[]): string => `${r1(median(xs))} (${r1(Math.min(...xs))}-${r1(Math.max(...xs))})`;

/**
 * spanfuse's own figures of its longest blocks (`stats().selfTime`): the
 * longest slice of window work, native stop and thread-state pass, and the
 * longest single step of each stage, medians (min-max) over rounds.
 */
function longestBlocks(results: Map<string, Result[]>): string[] {
  const rows: string[] = [];
  const stages = new Set<string>();
  for (const rs of results.values()) for (const x of rs) for (const k of Object.keys(x.selfTime?.stagesLongestStepMs ?? {})) stages.add(k);
  const stageList = [...stages].sort();
  for (const [name, rs] of results) {
    const own = rs.filter((x) => x.selfTime?.longestMs !== undefined);
    if (own.length === 0) continue;
    const of = (f: (x: Result) => number | undefined): string => spread(own.map((x) => f(x) ?? 0));
    rows.push(
      `| ${name} | ${of((x) => x.selfTime?.longestMs?.['sliced'])} | ${of((x) => x.selfTime?.longestMs?.['stops'])} | ${of((x) => x.selfTime?.longestMs?.['passes'])} | ` +
        stageList.map((s) => of((x) => x.selfTime?.stagesLongestStepMs?.[s])).join(' | ') +
        ' |',
    );
  }
  if (rows.length === 0) return [];
  return [
    '',
    "spanfuse's longest blocks of its own periodic work (`stats().selfTime.longestMs`, `stagesLongestStepMs`), ms:",
    `| configuration | slice | native stop | thread-state pass | ${stageList.map((s) => `step of ${s}`).join(' | ')} |`,
    `|---|---|---|---|${stageList.map(() => '---|').join('')}`,
    ...rows,
  ];
}

async function main(): Promise<void> {
  const results = new Map<string, Result[]>(configs.map((c) => [c.name, []]));
  for (let r = 0; r < rounds; r++) {
    // Alternate the order so neither side always runs first.
    const order = r % 2 === 0 ? configs : [...configs].reverse();
    for (const c of order) {
      const res = await runOnce(c);
      results.get(c.name)?.push(res);
      const rss = res.memory.map((m) => m.rssMb);
      process.stderr.write(
        `round ${r + 1} ${c.name}: spans/s ${res.spansPerSecond}, max gap ${res.maxGapMs} ms (own CPU ${res.maxCpuGapMs}), ` +
          `p99 ${res.p99GapMs} ms, gaps>5ms ${res.gapsOver5Ms} (own CPU>5ms ${res.cpuGapsOver5Ms}), rss ${rss[0] ?? '?'} -> ${rss[rss.length - 1] ?? '?'} MB\n`,
      );
    }
  }
  const lines = [
    `eventloop bench: ${rounds} interleaved rounds of ${seconds} s, ${nodeBin}${nodeArgs.length > 0 ? ` ${nodeArgs.join(' ')}` : ''}`,
    'Gap: time between two 1 ms ticks. Own CPU: the main thread\'s CPU time inside that gap (a block by this process;',
    'the rest of a gap is waiting for a core on a shared machine). Medians over rounds, (min-max).',
    `After start-up: from ${String(results.values().next().value?.[0]?.steadyMs ?? 5000)} ms on (V8 sizes its young generation and compiles the hot code before, in the control too).`,
    '| configuration | spans/s | largest gap ms | p99 gap ms | largest own-CPU gap ms | after start-up | p99 / p99.9 own-CPU gap ms | own-CPU gaps > 5 ms | RSS start -> end MB | V8 heap committed / new space at end MB |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const c of configs) {
    const rs = results.get(c.name) ?? [];
    const first = rs.map((x) => x.memory[1]?.rssMb ?? 0);
    const last = rs.map((x) => x.memory[x.memory.length - 1]?.rssMb ?? 0);
    lines.push(
      `| ${c.name} | ${median(rs.map((x) => x.spansPerSecond))} | ${spread(rs.map((x) => x.maxGapMs))} | ` +
        `${r1(median(rs.map((x) => x.p99GapMs)))} | ${spread(rs.map((x) => x.maxCpuGapMs))} | ` +
        `${spread(rs.map((x) => x.maxCpuGapSteadyMs ?? Number.NaN))} | ` +
        `${r1(median(rs.map((x) => x.p99CpuGapMs)))} / ${r1(median(rs.map((x) => x.p999CpuGapMs)))} | ` +
        `${median(rs.map((x) => x.cpuGapsOver5Ms))} | ${r1(median(first))} -> ${r1(median(last))} | ` +
        `${r1(median(rs.map((x) => x.memory[x.memory.length - 1]?.heapTotalMb ?? 0)))} / ` +
        `${r1(median(rs.map((x) => x.memory[x.memory.length - 1]?.spaces['new_space'] ?? 0)))} |`,
    );
  }
  lines.push(...longestBlocks(results));
  process.stdout.write(lines.join('\n') + '\n');
  if (jsonOut !== '') writeFileSync(jsonOut, JSON.stringify({ rounds, seconds, nodeBin, results: Object.fromEntries(results) }, null, 1));
}

main().catch((err: unknown) => {
  process.stderr.write(String(err) + '\n');
  process.exitCode = 1;
});
