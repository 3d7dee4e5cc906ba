/**
 * Worker churn stress, many runs: each run is a child process under
 * `--import spanfuse/register` running test/fixtures/worker-churn-app (WORKERS
 * workers burning CPU in spans, each terminated at a random moment and
 * replaced, for DURATION_MS). Counts aborts (exit code 134 / SIGABRT / a
 * FATAL ERROR line) and preload noise from terminated workers.
 *
 *   node dist/bench/workers/churn.js [--runs 50] [--duration-ms 8000] [--workers 50] [--node path]...
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const APP = fileURLToPath(new URL('../../test/fixtures/worker-churn-app.js', import.meta.url));

export interface ChurnRun {
  readonly code: number | null;
  readonly signal: string | null;
  readonly aborted: boolean;
  /** stderr lines a terminated worker's preload should not print. */
  readonly noise: number;
  readonly started: number;
  readonly stderr: string;
}

/** One run; never rejects. */
export function churnRun(node: string, opts: { durationMs: number; workers: number; maxLifeMs: number }): Promise<ChurnRun> {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-churn-'));
  return new Promise((resolve) => {
    const child = spawn(node, ['--import', 'spanfuse/register', APP], {
      cwd: ROOT,
      env: {
        ...process.env,
        SPANFUSE_OUTPUT_DIR: dir,
        WORKERS: String(opts.workers),
        DURATION_MS: String(opts.durationMs),
        MAX_LIFE_MS: String(opts.maxLifeMs),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.durationMs + 120_000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
      let started = 0;
      try {
        started = (JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as { started?: number }).started ?? 0;
      } catch {
        // no summary: the run died
      }
      const noise = stderr.split('\n').filter((l) => /is not a (function|constructor)|profiling is off/.test(l)).length;
      resolve({
        code,
        signal,
        aborted: code === 134 || signal === 'SIGABRT' || /FATAL ERROR/.test(stderr),
        noise,
        started,
        stderr,
      });
    });
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '50' },
      'duration-ms': { type: 'string', default: '8000' },
      workers: { type: 'string', default: '50' },
      'max-life-ms': { type: 'string', default: '1500' },
      node: { type: 'string', multiple: true },
    },
  });
  const nodes = values.node ?? [process.execPath];
  const runs = Number(values.runs);
  for (const node of nodes) {
    let aborts = 0;
    let noisy = 0;
    let failed = 0;
    let workers = 0;
    for (let i = 0; i < runs; i++) {
      const r = await churnRun(node, { durationMs: Number(values['duration-ms']), workers: Number(values.workers), maxLifeMs: Number(values['max-life-ms']) });
      workers += r.started;
      if (r.aborted) aborts++;
      if (r.noise > 0) noisy++;
      if (r.code !== 0) failed++;
      if (r.code !== 0) process.stderr.write(`run ${i}: exit ${String(r.code)} ${String(r.signal)}\n${r.stderr.slice(-2000)}\n`);
    }
    console.log(JSON.stringify({ node, runs, aborts, failedRuns: failed, runsWithPreloadNoise: noisy, workersStarted: workers }));
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
