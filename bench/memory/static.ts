/**
 * Where an idle process's memory goes, step by step (issue 11's RSS target):
 * each step is a fresh process that does what the step before it did plus
 * one thing, then runs a little CPU-bound code, waits, forces a GC and reports
 * its RSS and JS heap. The differences between steps are the cost of each
 * part; nothing here serves load (the overhead bench covers that).
 *
 *   base      node, the app's own modules: node:http, the OpenTelemetry SDK
 *             (sdk-trace-base, resources, context-async-hooks) and @datadog/pprof
 *             loaded, nothing started
 *   import    + spanfuse's index module imported (not started)
 *   sampler   + @datadog/pprof's wall sampler started alone (100 Hz, no contexts)
 *   spanfuse  + spanfuse started with only its span-labelled sampler (tail,
 *             spans.jsonl and runtime stage off), instead of the raw sampler
 *   defaults  + spanfuse started at defaults (thread-state passes on the main
 *             thread since 2026-12-04; the worker host costs what `worker` shows)
 *   worker    base + one idle worker thread (a minimal eval'd script that reads
 *             /proc/self/stat ten times a second, the thread-state worker's
 *             resource limits): what any worker isolate costs
 *
 * Steps are interleaved round by round; the table gives the median over rounds.
 *
 *   node dist/bench/memory/static.js [--rounds 5] [--node PATH]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { option } from '../args.js';

type Step = 'base' | 'import' | 'sampler' | 'spanfuse' | 'defaults' | 'worker';
const STEPS: readonly Step[] = ['base', 'import', 'sampler', 'spanfuse', 'defaults', 'worker'];

interface Measured {
  readonly rssMb: number;
  readonly heapUsedMb: number;
  readonly newSpaceMb: number;
  readonly threads: number;
}

const argv = process.argv.slice(2);
const opt = (name: string, dflt: string): string => option(argv, `--${name}`, dflt);

const RUNTIME_OFF = { threadState: false, perfEvents: false, processContext: false, threadContext: false, nameThreads: false };

async function child(step: Step, outputDir: string): Promise<void> {
  const v8 = await import('node:v8');
  const { readdirSync } = await import('node:fs');
  for (const m of ['node:http', '@opentelemetry/sdk-trace-base', '@opentelemetry/resources', '@opentelemetry/context-async-hooks', '@datadog/pprof']) await import(m);
  const { time } = await import('@datadog/pprof');
  const index = pathToFileURL(fileURLToPath(new URL('../../src/index.js', import.meta.url))).href;
  if (step !== 'base' && step !== 'worker') {
    const sf = (await import(index)) as { start(o: object): unknown };
    if (step === 'sampler') time.start({ intervalMicros: 10_000, durationMillis: 10_000, withContexts: false, collectCpuTime: false });
    if (step === 'spanfuse') sf.start({ outputDir, spansFile: false, tail: { enabled: false }, runtime: RUNTIME_OFF });
    if (step === 'defaults') sf.start({ outputDir });
  }
  if (step === 'worker') {
    const { Worker } = await import('node:worker_threads');
    const code = "const { readFileSync } = require('node:fs'); const { parentPort } = require('node:worker_threads'); setInterval(() => readFileSync('/proc/self/stat'), 100); parentPort.postMessage(1);";
    const w = new Worker(code, { eval: true, execArgv: [], stdout: false, stderr: false, resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 1 } });
    await new Promise((r) => w.once('message', r));
    w.unref();
  }
  // Some code to compile and run, as any service would before it idles.
  let x = 0;
  for (let i = 0; i < 2_000_000; i++) x += Math.sqrt(i);
  if (x < 0) process.stderr.write('unreachable\n'); // keeps the loop from being optimised away
  await new Promise((r) => setTimeout(r, 3000));
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  const ns = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
  const out: Measured = {
    rssMb: m.rss / 1e6,
    heapUsedMb: m.heapUsed / 1e6,
    newSpaceMb: (ns?.space_size ?? 0) / 1e6,
    threads: readdirSync('/proc/self/task').length,
  };
  process.stdout.write(JSON.stringify(out) + '\n');
  process.exit(0);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? Number.NaN : n % 2 === 1 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2;
}

function main(): void {
  const rounds = Number(opt('rounds', '5'));
  const node = opt('node', process.execPath);
  const self = fileURLToPath(import.meta.url);
  const results = new Map<Step, Measured[]>(STEPS.map((s) => [s, []]));
  for (let r = 0; r < rounds; r++) {
    const order = STEPS.map((_, i) => STEPS[(i + r) % STEPS.length]!);
    for (const step of order) {
      const dir = mkdtempSync(join(tmpdir(), 'spanfuse-mem-'));
      try {
        const p = spawnSync(node, ['--expose-gc', self, '--child', step, '--dir', dir], { encoding: 'utf8', timeout: 60_000 });
        if (p.status !== 0) throw new Error(`${step} round ${r} failed (${p.status ?? p.signal}): ${p.stderr}`);
        results.get(step)!.push(JSON.parse(p.stdout.trim().split('\n').pop() ?? '{}') as Measured);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  }
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  const med = (s: Step, k: keyof Measured): number => median(results.get(s)!.map((m) => m[k]));
  const prev: Partial<Record<Step, Step>> = { import: 'base', sampler: 'import', spanfuse: 'import', defaults: 'import', worker: 'base' };
  const lines = [
    `Idle memory by step, node ${version}, ${rounds} rounds (median; each step a fresh process, after a forced GC)`,
    '',
    '| step | RSS | over | JS heap used | new space | threads |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  for (const s of STEPS) {
    const p = prev[s];
    const over = p === undefined ? '–' : `+${(med(s, 'rssMb') - med(p, 'rssMb')).toFixed(1)} MB over ${p}`;
    lines.push(`| ${s} | ${med(s, 'rssMb').toFixed(1)} MB | ${over} | ${med(s, 'heapUsedMb').toFixed(1)} MB | ${med(s, 'newSpaceMb').toFixed(1)} MB | ${med(s, 'threads')} |`);
  }
  process.stdout.write(lines.join('\n') + '\n');
}

const ci = argv.indexOf('--child');
if (ci >= 0) await child(argv[ci + 1] as Step, opt('dir', tmpdir()));
else main();
