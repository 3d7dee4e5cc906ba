/**
 * spanfuse's own periodic work over a process's life, window by window.
 *
 * Loaded into the overhead bench's server with `--server-flag`, it appends
 * the thread's own-work totals (`selfTimeTotals()`: window slices by stage,
 * native stops, thread-state passes) to `SELFLOG_FILE` once a second. With
 * `--report FILE` it prints, for every second in which something ran, what
 * ran in it: a window close shows as a line with slices. The overhead
 * bench's measured seconds (after its warm-up) hold the process's first
 * windows, whose code is still cold; this shows how much costlier they are
 * than later ones.
 *
 *   SELFLOG_FILE=/tmp/spanfuse-self.jsonl node dist/bench/overhead/run.js --rounds 1 --warmup 5 \
 *     --duration 80 --window-ms 10000 --configs spanfuse-default --nodes node24 \
 *     --server-flag=--import=$PWD/dist/bench/overhead/self-log.js
 *   node dist/bench/overhead/self-log.js --report /tmp/spanfuse-self.jsonl
 *
 * The bench's control runs with the preload too: its lines stay at zero and
 * are left out of the report. The import resolves to the same module the
 * server's spanfuse (this checkout's `dist`) counts in.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { selfTimeTotals } from '../../src/core/self-time.js';
import type { SelfTime } from '../../src/core/self-time.js';

interface Line extends SelfTime {
  /** ms since the preload ran. */
  readonly t: number;
}

const round1 = (x: number): number => Math.round(x * 10) / 10;

function report(file: string): void {
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Line);
  let prev: Line | undefined;
  let windows = 0;
  for (const l of lines) {
    // A new process starts its clock again.
    if (prev === undefined || l.t < prev.t) {
      prev = l;
      continue;
    }
    const sliced = l.slicedMs - prev.slicedMs;
    const stops = l.stopsMs - prev.stopsMs;
    const passes = l.passesMs - prev.passesMs;
    if (sliced > 0 || stops > 0) {
      const stages = Object.entries(l.stagesMs)
        .map(([k, v]) => [k, round1((v ?? 0) - (prev?.stagesMs[k as keyof SelfTime['stagesMs']] ?? 0))] as const)
        .filter(([, v]) => v > 0)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');
      if (sliced > 0) windows++;
      process.stdout.write(
        `${(l.t / 1000).toFixed(1).padStart(6)} s  slices ${round1(sliced).toString().padStart(6)} ms  stops ${round1(stops).toString().padStart(5)} ms  passes ${round1(passes).toString().padStart(5)} ms${stages === '' ? '' : `  (${stages})`}\n`,
      );
    }
    prev = l;
  }
  process.stdout.write(`${windows} seconds with window slices\n`);
}

const at = process.argv.indexOf('--report');
if (at >= 0) {
  const file = process.argv[at + 1];
  if (file === undefined) throw new Error('--report needs the file SELFLOG_FILE named');
  report(file);
} else {
  const file = process.env['SELFLOG_FILE'] ?? '/tmp/spanfuse-self.jsonl';
  const t0 = performance.now();
  setInterval(() => {
    appendFileSync(file, `${JSON.stringify({ t: Math.round(performance.now() - t0), ...selfTimeTotals() })}\n`);
  }, 1000).unref();
}
