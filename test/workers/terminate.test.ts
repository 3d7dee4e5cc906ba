import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fixture, lastJsonLine, runNode } from '../support/child.js';
import { readPprof, wallFiles } from '../support/pprof.js';

interface Truth {
  name: string;
  tid: number;
  workedMs: number;
  livedMs: number;
}

const INTERVAL_MS = 2;

/** CPU ms in `terminated_work` per thread.id label, and sample counts, over every wall profile. */
function profiled(dir: string): { cpuMs: Map<string, number>; samples: Map<string, number> } {
  const cpuMs = new Map<string, number>();
  const samples = new Map<string, number>();
  for (const f of wallFiles(dir)) {
    const p = readPprof(f);
    const cpu = p.sampleTypes.indexOf('cpu');
    assert.ok(cpu >= 0, 'no cpu sample type');
    for (const s of p.samples) {
      const tid = String(s.labels['thread.id']);
      if (!s.frames.includes('terminated_work')) continue;
      samples.set(tid, (samples.get(tid) ?? 0) + (s.values[0] ?? 0));
      cpuMs.set(tid, (cpuMs.get(tid) ?? 0) + (s.values[cpu] ?? 0) / 1e6);
    }
  }
  return { cpuMs, samples };
}

async function once(): Promise<{ truth: Truth[]; byTid: Map<string, number>; samples: Map<string, number>; flush: { flushed: number; timedOut: number } }> {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-terminate-'));
  const truthPath = join(dir, 'truth.json');
  const r = await runNode(['--import', 'spanfuse/register', fixture('worker-terminate-app')], {
    SPANFUSE_OUTPUT_DIR: dir,
    SPANFUSE_SAMPLING_INTERVAL_US: String(INTERVAL_MS * 1000),
    GROUND_TRUTH: truthPath,
    SHORT: '30',
    LONG_MS: '3000',
  }, 180_000);
  assert.equal(r.code, 0, `fixture failed: ${r.stderr}`);
  const { flush } = lastJsonLine<{ flush: { flushed: number; timedOut: number } }>(r.stdout);
  const p = profiled(dir);
  return { truth: JSON.parse(readFileSync(truthPath, 'utf8')) as Truth[], byTid: p.cpuMs, samples: p.samples, flush };
}

/**
 * Held to 80% on both runtimes. Node 20 (async-hooks mode) measured 80-86% on
 * 2026-12-01 on this kind of machine, with the build from before that day's
 * changes as well as after (93-100% the day before): its samplers got ~57% of
 * the samples their wall time calls for. Node 24 kept >= 90% until
 * 2026-12-02, when a slower VM of the same kind measured 82-86% in every
 * attempt with the unchanged build of 2d8f8e4 as well as after (samples 61%
 * of what the wall time calls for). The loss this test guards against is
 * far below that: every worker here dies inside its first window, so without
 * the flush before terminate none of their CPU would reach a profile.
 */
const MIN_SHARE = 0.8;

test('file workers terminated mid-work (one long-lived, 30 short): >= 80% of their CPU is in the profiles, each under its own thread.id', async (t) => {
  // The short workers live 30-90 ms: on a loaded 2-core machine the sampler
  // thread itself can starve for that long. Up to three tries; the best counts.
  let best = 0;
  let detail = '';
  let starved = 0;
  for (let attempt = 0; attempt < 3 && best < MIN_SHARE; attempt++) {
    const { truth, byTid, samples, flush } = await once();
    assert.equal(truth.length, 31);
    // Every worker answered the flush request before it was terminated.
    assert.equal(flush.flushed, 31, `flush stats ${JSON.stringify(flush)}`);
    const tids = new Set(truth.map((t) => String(t.tid)));
    assert.equal(tids.size, 31, 'each worker has its own OS thread id');
    for (const t of truth) assert.ok((byTid.get(String(t.tid)) ?? 0) > 0, `worker ${t.name} (tid ${t.tid}) has no samples in the profiles`);
    // No sample of terminated_work under a thread that is not one of the workers.
    for (const tid of byTid.keys()) assert.ok(tids.has(tid), `samples under unknown thread.id ${tid}`);
    // Evidence of a starved sampler: far fewer samples than the workers'
    // wall time in terminated_work calls for (the sampler fires on wall time).
    const expected = truth.reduce((a, x) => a + x.livedMs / INTERVAL_MS, 0);
    const got = truth.reduce((a, x) => a + (samples.get(String(x.tid)) ?? 0), 0);
    if (got < 0.5 * expected) starved++;
    detail += ` [samples ${got} of ~${Math.round(expected)} expected]`;
    const worked = truth.reduce((a, t) => a + t.workedMs, 0);
    const seen = truth.reduce((a, t) => a + (byTid.get(String(t.tid)) ?? 0), 0);
    const ratio = seen / worked;
    detail += ` attempt ${attempt}: worked ${worked.toFixed(0)} ms CPU, profiled ${seen.toFixed(0)} ms (${(100 * ratio).toFixed(1)}%)`;
    best = Math.max(best, ratio);
  }
  if (best < MIN_SHARE && starved === 3) {
    t.skip(`the sampler got under half its samples in every attempt (machine overloaded), cannot judge:${detail}`);
    return;
  }
  assert.ok(best >= MIN_SHARE, `less than ${100 * MIN_SHARE}% of the workers' CPU in the profiles:${detail}`);
});

// Node (20 and 24) loses a termination that lands while a worker runs the
// inspector's evaluation. terminate() asks a profiled worker to write its
// window first, inside the interrupt when its loop gives no turn; when the
// bound passed while it still wrote, the termination was lost, the worker
// ran on, and terminate() never resolved (3 of 3 runs of 8 workers with a
// 150 ms bound, on 082f6fd). terminate() now closes the worker to requests
// and waits until none runs there before it proceeds.
test('terminate() whose flush bound passes while the workers write inside the interrupt still resolves (Node lost those terminations)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-terminside-'));
  const r = await runNode(
    ['--import', 'spanfuse/register', fixture('worker-terminate-inside-app')],
    { SPANFUSE_OUTPUT_DIR: dir, SPANFUSE_SAMPLING_INTERVAL_US: '2000', SPANFUSE_WORKER_FLUSH_TIMEOUT_MS: '150', WORKERS: '8' },
    45_000,
  );
  assert.equal(r.code, 0, `exit code ${r.code}, signal ${r.signal} (SIGKILL after 45 s: terminate() never resolved); ${r.stdout} ${r.stderr}`);
  const out = lastJsonLine<{ terminatedMs?: number; workerFlush?: Record<string, number> }>(r.stdout);
  const f = out.workerFlush;
  assert.ok(f !== undefined && out.terminatedMs !== undefined, r.stdout);
  assert.equal(f['leftInside'], 0, r.stdout);
  assert.equal((f['flushed'] ?? 0) + (f['empty'] ?? 0) + (f['timedOut'] ?? 0) + (f['unreachable'] ?? 0), 8, r.stdout);
});

test('await terminate() of a worker that ended on its own resolves, and the app goes on', async () => {
  const r = await runNode(['--import', 'spanfuse/register', fixture('worker-finished-terminate-app')], {
    SPANFUSE_OUTPUT_DIR: mkdtempSync(join(tmpdir(), 'spanfuse-finished-')),
    ROUNDS: '3',
  });
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /unsettled top-level await/);
  const out = lastJsonLine<{ results?: number[] }>(r.stdout);
  assert.deepEqual(out.results, [0, 1, 2], `stdout: ${r.stdout}`);
});
