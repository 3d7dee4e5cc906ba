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
for (const sync of [false, true]) {
  // SYNC: the workers' loops give no turn, so each is asked a second time,
  // to write inside the interrupt. spanfuse's exit path closed the inspector
  // session before it waited, and that second request failed ('unreachable',
  // c86ba48..e8b1430): the window was lost (on a loaded machine also for
  // event-loop workers, ~1 run in 20 on Node 20).
  test(`process.exit() while profiled workers run${sync ? ' a synchronous loop' : ''}: each worker writes its open window first`, async () => {
    await exitWhileRunning(sync);
  });
}

async function exitWhileRunning(sync: boolean): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-exitflush-'));
  const r = await runNode(['--import', 'spanfuse/register', fixture('worker-exit-flush-app')], {
    SPANFUSE_OUTPUT_DIR: dir,
    SPANFUSE_SAMPLING_INTERVAL_US: '2000',
    WORKERS: '3',
    SYNC: sync ? '1' : '0',
  });
  assert.equal(r.code, 0, r.stderr);
  const flush = (JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { workerFlush?: Record<string, number> }).workerFlush;
  assert.equal(flush?.['unreachable'], 0, r.stdout);
  if (sync) assert.equal(flush?.['interrupted'], 3, r.stdout);
  const samples = new Map<string, number>();
  for (const f of wallFiles(dir)) {
    for (const s of readPprof(f).samples) {
      if (!s.frames.includes('exit_flushed_work')) continue;
      const tid = String(s.labels['thread.id']);
      samples.set(tid, (samples.get(tid) ?? 0) + (s.values[0] ?? 0));
    }
  }
  assert.equal(samples.size, 3, `workers with samples of their work: ${JSON.stringify([...samples])}; ${r.stdout}`);
  for (const [tid, n] of samples) assert.ok(n >= 20, `worker ${tid}: only ${n} samples of ~800 ms of work`);
}
