/**
 * Overhead benchmark entry: `node dist/bench/overhead/run.js [--short|--soak]`.
 *
 * Every configuration runs in a fresh server process pinned to one core,
 * under a fixed-concurrency load from a separate process pinned to the other,
 * interleaved config by config and round by round (the starting config
 * rotates each round) so that machine noise hits all alike. The harness
 * rejects no run for being noisy: it reports the spread.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { Child } from './child.js';
import { findConfig } from './configs.js';
import { parseOptions } from './options.js';
import type { Options } from './options.js';
import type { FromLoad, ToLoad } from './protocol.js';
import { aggregate, markdown, soakMarkdown, soakRow } from './report.js';
import type { Header } from './report.js';
import { runOne } from './run-one.js';
import type { RunResult } from './run-one.js';
import { Sink } from './sink.js';

function log(msg: string): void {
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${msg}\n`);
}

function version(bin: string): string {
  try {
    return execFileSync(bin, ['-v'], { encoding: 'utf8' }).trim();
  } catch (err) {
    return `unavailable (${String(err)})`;
  }
}

function machine(): string {
  const c = cpus();
  let loadavg = '';
  try {
    loadavg = execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).trim().split(' ').slice(0, 3).join(' ');
  } catch {
    // not Linux
  }
  return `${c.length} × ${c[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${process.platform}${loadavg === '' ? '' : `, loadavg at start ${loadavg}`}`;
}

function summary(r: RunResult): string {
  if (!r.ok) return `FAILED: ${(r.error ?? '').split('\n')[0] ?? ''}`;
  const a = r.attribution;
  const attr =
    a === null || a === undefined
      ? ''
      : `, attribution ${a.share === null ? 'n/a' : (100 * a.share).toFixed(1) + '%'} of ${a.samplesInRequestCode} samples` +
        (a.groundTruthComplete ? '' : ' (ground truth ring overflowed: not a valid figure)');
  return (
    `${(r.throughputRps ?? 0).toFixed(0)} req/s, ${(r.cpuPerRequestMicros ?? 0).toFixed(0)} µs CPU/req, ` +
    `p50 ${(r.load?.latencyMs.p50 ?? 0).toFixed(2)} ms, p99 ${(r.load?.latencyMs.p99 ?? 0).toFixed(2)} ms, ` +
    `RSS ${(r.rssMb ?? 0).toFixed(1)} MB, heap ${(r.heapUsedMb ?? 0).toFixed(1)} MB, exports in window ${r.exportsInWindow ?? 0}${attr}`
  );
}

function rotate<T>(xs: readonly T[], by: number): T[] {
  if (xs.length === 0) return [];
  const k = by % xs.length;
  return [...xs.slice(k), ...xs.slice(0, k)];
}

/** `run.js --render results.json`: re-render a stored run with this version's report. */
/** What a configuration's ratios are to (a `@base` twin: its original's). */
function referenceOf(config: string): string {
  return findConfig(config.replace(/@base$/, ''))?.reference ?? 'control';
}

async function render(file: string): Promise<void> {
  const { readFile } = await import('node:fs/promises');
  const data = JSON.parse(await readFile(file, 'utf8')) as { header: Header; results: RunResult[]; soak?: unknown };
  if (data.soak !== undefined) {
    process.stdout.write(soakMarkdown(data.header, data.results.map(soakRow)));
    return;
  }
  const configs = [...new Set(data.results.map((r) => r.config))];
  const rts = Object.keys(data.header.runtimes);
  process.stdout.write(markdown(data.header, aggregate(data.results, configs, rts, referenceOf)));
}

async function main(): Promise<void> {
  const ri = process.argv.indexOf('--render');
  if (ri >= 0) {
    await render(process.argv[ri + 1] ?? '');
    return;
  }
  const o: Options = parseOptions(process.argv.slice(2));
  if (o.pin) {
    // The harness (and the sinks it hosts) shares the load generator's core,
    // never the server's.
    try {
      execFileSync('taskset', ['-pc', o.loadCpu, String(process.pid)], { stdio: 'ignore' });
    } catch (err) {
      log(`warning: could not pin the harness: ${String(err)}`);
    }
  }
  if (o.configs.some((c) => c.profiler === 'spanfuse') && !existsSync(o.spanfuseModule)) {
    log(`warning: spanfuse module ${o.spanfuseModule} not found; spanfuse runs will fail (build it, or pass --spanfuse PATH)`);
  }
  const peers = { pyroscope: '@pyroscope/nodejs', 'dd-trace': 'dd-trace' } as const;
  for (const c of o.configs) {
    if (c.profiler !== 'pyroscope' && c.profiler !== 'dd-trace') continue;
    if (!existsSync(join(o.repoRoot, 'bench', 'node_modules', peers[c.profiler], 'package.json'))) {
      log(`warning: ${peers[c.profiler]} is not installed; run \`npm install --prefix bench\` (the ${c.name} runs will fail)`);
    }
  }
  const runtimes: Record<string, string> = {};
  for (const rt of o.runtimes) runtimes[rt.name] = version(rt.bin);
  log(`runtimes: ${JSON.stringify(runtimes)}`);

  const sink = new Sink();
  await sink.listen();
  const load = new Child<ToLoad, FromLoad>({
    nodeBin: process.execPath,
    execArgv: [],
    script: join(import.meta.dirname, 'load.js'),
    env: process.env,
    ...(o.pin ? { cpu: o.loadCpu } : {}),
  });
  await load.next(['ready'], 30_000);

  const startedAt = new Date();
  const results: RunResult[] = [];
  try {
    for (let round = 0; round < o.rounds; round++) {
      for (const rt of o.runtimes) {
        for (const cfg of rotate(o.configs, round)) {
          log(`round ${round + 1}/${o.rounds} ${rt.name} ${cfg.name} ...`);
          const r = await runOne(o, cfg, rt, round, load, sink);
          results.push(r);
          log(`  ${summary(r)}`);
        }
      }
    }
  } finally {
    load.send({ type: 'exit' });
    await load.waitExit(10_000);
    await sink.close();
  }

  const stamp = startedAt.toISOString().replace(/[:.]/g, '-').replace(/-\d{3}Z$/, 'Z');
  const kind = o.kind;
  const base = join(o.outDir, `overhead-${kind}-${stamp}`);
  const header: Header = {
    title: o.mode === 'soak' ? `spanfuse soak (${kind})` : `spanfuse overhead vs peers (${kind})`,
    date: startedAt.toISOString(),
    machine: machine(),
    runtimes,
    command: `node ${process.argv.slice(1).map((a) => a.replace(o.repoRoot + '/', '')).join(' ')}`,
    settings:
      o.mode === 'soak'
        ? `${o.soakMinutes} min per config, ${o.connections} connections, warm-up ${o.warmupSec} s, memory sample every ${o.memorySampleMs / 1000} s after a forced GC, export window ${o.windowMs} ms, unit ${o.unitIterations} iterations, pinned: ${String(o.pin)}`
        : `${o.rounds} rounds, ${o.connections} connections, warm-up ${o.warmupSec} s, measured ${o.durationSec} s, export window ${o.windowMs} ms (every profiler), unit ${o.unitIterations} iterations, service ${o.service}, pinned: ${o.pin ? `server cpu ${o.serverCpu}, load cpu ${o.loadCpu}` : 'no'}`,
    note: o.note,
  };
  await mkdir(o.outDir, { recursive: true });
  let md: string;
  let json: unknown;
  if (o.mode === 'soak') {
    const rows = results.map(soakRow);
    md = soakMarkdown(header, rows);
    json = { header, options: describeOptions(o), soak: rows, results };
  } else {
    const rows = aggregate(
      results,
      o.configs.map((c) => c.name),
      o.runtimes.map((r) => r.name),
      referenceOf,
    );
    md = markdown(header, rows);
    json = { header, options: describeOptions(o), rows, results };
  }
  await writeFile(`${base}.md`, md);
  await writeFile(`${base}.json`, JSON.stringify(json, bigintSafe, 2) + '\n');
  process.stdout.write(md);
  log(`wrote ${base}.md and ${base}.json`);
}

function describeOptions(o: Options): Record<string, unknown> {
  return { ...o, configs: o.configs };
}

function bigintSafe(_k: string, v: unknown): unknown {
  return typeof v === 'bigint' ? v.toString() : v;
}

main().catch((err: unknown) => {
  log(`benchmark failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
});
