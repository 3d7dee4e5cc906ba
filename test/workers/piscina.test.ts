import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fixture, runNode } from '../support/child.js';
import { readPprof, wallFiles } from '../support/pprof.js';

/**
 * Ground truth from the stacks, as in the spine attribution test: a worker
 * sample whose stack holds `task_<i>` ran request i's task, so it must carry
 * request i's trace, under the worker's child span (not the request span).
 */
test('piscina: 40 concurrent spans submit uniquely named tasks; >= 95% of worker task samples carry the submitting trace', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-piscina-'));
  const truthPath = join(dir, 'truth.json');
  const r = await runNode(['--import', 'spanfuse/register', fixture('worker-piscina-app')], {
    SPANFUSE_OUTPUT_DIR: dir,
    SPANFUSE_SAMPLING_INTERVAL_US: '1000',
    GROUND_TRUTH: truthPath,
    CONCURRENT: '40',
  }, 180_000);
  assert.equal(r.code, 0, `fixture failed: ${r.stderr}`);
  const truth = JSON.parse(readFileSync(truthPath, 'utf8')) as Record<string, { traceId: string; spanId: string }>;
  assert.equal(Object.keys(truth).length, 40);
  let inTask = 0;
  let right = 0;
  let unlabelled = 0;
  let wrong = 0;
  const threads = new Set<string>();
  const mainTid = new Set<string>();
  for (const f of wallFiles(dir)) {
    for (const s of readPprof(f).samples) {
      const n = s.values[0] ?? 0;
      if (s.frames.includes('(root)') && s.labels['thread.name'] === 'main') mainTid.add(String(s.labels['thread.id']));
      const m = s.frames.map((name) => /^task_(\d+)$/.exec(name)).find((x) => x !== null);
      if (!m) continue;
      const t = truth[m[1]!];
      assert.ok(t, `no ground truth for task ${m[1]}`);
      threads.add(String(s.labels['thread.id']));
      inTask += n;
      if (s.labels['trace_id'] === undefined) unlabelled += n;
      else if (s.labels['trace_id'] === t.traceId && s.labels['span_id'] !== t.spanId) right += n;
      else wrong += n;
    }
  }
  const detail = JSON.stringify({ inTask, right, unlabelled, wrong, threads: [...threads] });
  assert.ok(inTask >= 200, `too few task samples to judge: ${detail}`);
  assert.ok(right / inTask >= 0.95, `only ${((100 * right) / inTask).toFixed(1)}% carry the submitting trace: ${detail}`);
  assert.equal(wrong, 0, `samples under another request's trace: ${detail}`);
  // The tasks ran in the pool's worker threads, not in the main thread.
  assert.ok(threads.size >= 1 && [...threads].every((t) => !mainTid.has(t)), detail);
});
