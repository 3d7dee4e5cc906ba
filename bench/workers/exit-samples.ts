/**
 * The exit test's fixture, many runs: `process.exit()` while WORKERS
 * profiled workers run a synchronous loop (test/fixtures/worker-exit-flush-app,
 * as `test/workers/exit-flush.test.ts` runs it). Per run: the exit code or
 * signal, abort lines on stderr, how many workers' windows hold samples of
 * their work and the fewest / median / most samples of one worker, and the
 * exit flush's figures. For the flake of 2026-12-07 (one worker with 1
 * sample, once in CI on Node 20) and runs that ended by a signal beside a
 * CI run: run it next to other load to look for them.
 *
 *   node dist/bench/workers/exit-samples.js [--runs 10] [--workers 20] [--node path]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fixture, runNode } from '../../test/support/child.js';
import { samplesPerThread } from '../../test/support/pprof.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '10' },
    workers: { type: 'string', default: '20' },
    node: { type: 'string', default: process.execPath },
  },
});
const runs = Number(values.runs);
const workers = Number(values.workers);

for (let i = 0; i < runs; i++) {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-exit-samples-'));
  try {
    const r = await runNode(
      ['--import', 'spanfuse/register', fixture('worker-exit-flush-app')],
      { SPANFUSE_OUTPUT_DIR: dir, SPANFUSE_SAMPLING_INTERVAL_US: '2000', WORKERS: String(workers), SYNC: '1' },
      60_000,
      values.node,
    );
    const perWorker = samplesPerThread(dir, 'exit_flushed_work');
    const counts = [...perWorker.values()].sort((a, b) => a - b);
    const aborts = r.stderr
      .split('\n')
      .filter((l) => /abort|fatal|assert/i.test(l))
      .slice(0, 2)
      .join(' | ');
    const flush = r.stdout.trim().split('\n').pop() ?? '';
    process.stdout.write(
      `run ${i + 1}: exit ${r.code ?? r.signal}, ${perWorker.size}/${workers} workers with samples, ` +
        `fewest ${counts[0] ?? 0} median ${counts[Math.floor(counts.length / 2)] ?? 0} most ${counts[counts.length - 1] ?? 0}, ` +
        `${flush}${aborts === '' ? '' : `, stderr: ${aborts}`}\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
