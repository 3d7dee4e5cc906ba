/**
 * What a worker thread costs under the preload: time from `new Worker()` to
 * its first message, the process's CPU over that time, and the RSS each
 * idle worker adds, with and without `--import spanfuse/register`. Each
 * measurement is a fresh child process (bench/workers/footprint-app);
 * variants alternate within a round. RSS per worker is the median over
 * rounds of (RSS with WORKERS workers − RSS with none) / WORKERS, each
 * pair from the same round.
 *
 *   node dist/bench/workers/footprint.js [--rounds 5] [--workers 8] [--node path]...
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const APP = fileURLToPath(new URL('./footprint-app.js', import.meta.url));

interface AppResult {
  readonly rssMb: number;
  readonly startMs: number[];
  readonly cpuMs: number[];
}

function runApp(node: string, preload: boolean, workers: number): AppResult {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-footprint-'));
  try {
    const r = spawnSync(node, [...(preload ? ['--import', 'spanfuse/register'] : []), APP], {
      cwd: ROOT,
      env: { ...process.env, SPANFUSE_OUTPUT_DIR: dir, WORKERS: String(workers) },
      encoding: 'utf8',
      timeout: 120_000,
    });
    if (r.status !== 0) throw new Error(`footprint app failed (${String(r.status)} ${String(r.signal)}): ${r.stderr.slice(-2000)}`);
    return JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as AppResult;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const range = (xs: number[]): string => `${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}`;

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '5' }, workers: { type: 'string', default: '8' }, node: { type: 'string', multiple: true } },
});
const rounds = Number(values.rounds);
const workers = Number(values.workers);
const nodes = values.node ?? [process.execPath];

console.log(`${rounds} rounds, ${workers} idle eval workers per process; medians (min–max) over rounds`);
console.log('| node | preload | start, ms per worker | process CPU during a start, ms | RSS per worker, MB |');
console.log('|---|---|---|---|---|');
for (const node of nodes) {
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  const got = { plain: { start: [] as number[], cpu: [] as number[], rss: [] as number[] }, spanfuse: { start: [] as number[], cpu: [] as number[], rss: [] as number[] } };
  for (let r = 0; r < rounds; r++) {
    for (const variant of r % 2 === 0 ? (['plain', 'spanfuse'] as const) : (['spanfuse', 'plain'] as const)) {
      const preload = variant === 'spanfuse';
      const none = runApp(node, preload, 0);
      const some = runApp(node, preload, workers);
      // The first worker also pays one-time costs in the parent (loading worker_threads' machinery).
      got[variant].start.push(median(some.startMs.slice(1)));
      got[variant].cpu.push(median(some.cpuMs.slice(1)));
      got[variant].rss.push((some.rssMb - none.rssMb) / workers);
    }
  }
  for (const variant of ['plain', 'spanfuse'] as const) {
    const g = got[variant];
    console.log(
      `| ${version} | ${variant === 'plain' ? 'none' : 'spanfuse/register'} | ${median(g.start).toFixed(1)} (${range(g.start)}) | ${median(g.cpu).toFixed(1)} (${range(g.cpu)}) | ${median(g.rss).toFixed(1)} (${range(g.rss)}) |`,
    );
  }
}
