import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { EXIT_STAGE_WAIT_MS } from '../../src/workers/terminate-hook.js';
import { fixture, lastJsonLine, runNode } from '../support/child.js';

// On Node 20 a worker terminated while require() instantiates ES modules
// aborts the whole process. spanfuse loads some stages that way when they
// are configured (the heap profile, the OTLP exporter); under the preload
// the preload's own mark makes terminate() wait, but a worker the app
// created before starting spanfuse, whose own code calls start(), has no
// preload. Its stage loads are announced in the worker registry instead
// (core/require-esm.ts) and terminate() and the process's exit wait for
// them. The fixture's stage takes 1 s to evaluate: without the wait the
// termination cuts it short.

const run = (mode: string) =>
  runNode([fixture('worker-stage-load-app')], { MODE: mode, SPANFUSE_OUTPUT_DIR: mkdtempSync(join(tmpdir(), 'spanfuse-stageload-')) });

test("terminate() of a worker loading a stage outside the preload waits for the load", async () => {
  const r = await run('terminate');
  assert.equal(r.code, 0, `${String(r.signal)} ${r.stderr.slice(-2000)}`);
  assert.deepEqual(lastJsonLine(r.stdout), { evaluated: true }, r.stdout);
});

test("the process's exit lets a worker loading a stage outside the preload finish the load", async () => {
  const r = await run('exit');
  assert.equal(r.code, 0, `${String(r.signal)} ${r.stderr.slice(-2000)}`);
  assert.deepEqual(lastJsonLine(r.stdout), { evaluated: true }, r.stdout);
});

test('a worker whose termination has begun does not start a stage load', async () => {
  const r = await run('refuse');
  assert.equal(r.code, 0, `${String(r.signal)} ${r.stderr.slice(-2000)}`);
  assert.deepEqual(lastJsonLine(r.stdout), { answer: 'spanfuse: a slow stage not loaded: this worker is being terminated' }, r.stdout);
});

test("the process's exit does not wait for a worker that died in the middle of a stage load", async () => {
  // The nested worker's load is cut short by its parent's termination,
  // which runs no terminate() hook: its bit in the registry stays set. The
  // exit's wait for stage loads (5 s at most) must see that its thread is
  // gone rather than wait out the 5 s.
  const r = await run('orphan');
  assert.equal(r.code, 0, `${String(r.signal)} ${r.stderr.slice(-2000)}`);
  const out = lastJsonLine<{ evaluated: boolean; exitMs: number }>(r.stdout);
  assert.equal(out.evaluated, false, r.stdout);
  assert.ok(out.exitMs < EXIT_STAGE_WAIT_MS / 2, `the exit took ${out.exitMs} ms (its wait is bounded at ${EXIT_STAGE_WAIT_MS} ms)`);
});
