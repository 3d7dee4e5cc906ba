import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fixture, runNode } from '../support/child.js';
import { readPprof, wallFiles } from '../support/pprof.js';

// A worker's samples live in its own isolate until it writes its window.
// terminate() asks it to first; the process's exit terminates every worker
// with no terminate() call, and before spanfuse asked them from its 'exit'
// listener, a process.exit() lost each worker's open window whole.
test('process.exit() while profiled workers run: each worker writes its open window first', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-exitflush-'));
  const r = await runNode(['--import', 'spanfuse/register', fixture('worker-exit-flush-app')], {
    SPANFUSE_OUTPUT_DIR: dir,
    SPANFUSE_SAMPLING_INTERVAL_US: '2000',
    WORKERS: '3',
  });
  assert.equal(r.code, 0, r.stderr);
  const samples = new Map<string, number>();
  for (const f of wallFiles(dir)) {
    for (const s of readPprof(f).samples) {
      if (!s.frames.includes('exit_flushed_work')) continue;
      const tid = String(s.labels['thread.id']);
      samples.set(tid, (samples.get(tid) ?? 0) + (s.values[0] ?? 0));
    }
  }
  assert.equal(samples.size, 3, `workers with samples of their work: ${JSON.stringify([...samples])}`);
  for (const [tid, n] of samples) assert.ok(n >= 20, `worker ${tid}: only ${n} samples of ~800 ms of work`);
});
