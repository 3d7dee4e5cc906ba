import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fixture, lastJsonLine, runNode } from '../support/child.js';
import { readPprof, wallFiles } from '../support/pprof.js';

test('eval workers and workers with their own execArgv are profiled under --import spanfuse/register', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-inject-'));
  const r = await runNode(['--import', 'spanfuse/register', fixture('worker-eval-app')], {
    SPANFUSE_OUTPUT_DIR: dir,
    SPANFUSE_SAMPLING_INTERVAL_US: '2000',
  });
  assert.equal(r.code, 0, r.stderr);
  const out = lastJsonLine<Record<'eval' | 'execArgv', { tid: number; running: boolean }>>(r.stdout);
  assert.equal(out.eval.running, true, 'spanfuse not running in the eval worker');
  assert.equal(out.execArgv.running, true, 'spanfuse not running in the execArgv worker');
  const byFn = new Map<string, Set<string>>();
  for (const f of wallFiles(dir)) {
    for (const s of readPprof(f).samples) {
      for (const fn of ['eval_worker_burn', 'execargv_worker_burn']) {
        if (s.frames.includes(fn)) byFn.set(fn, (byFn.get(fn) ?? new Set()).add(String(s.labels['thread.id'])));
      }
    }
  }
  assert.deepEqual([...(byFn.get('eval_worker_burn') ?? [])], [String(out.eval.tid)]);
  assert.deepEqual([...(byFn.get('execargv_worker_burn') ?? [])], [String(out.execArgv.tid)]);
});
