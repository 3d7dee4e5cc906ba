import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fixture, runNode } from '../support/child.js';

// At start-up on Node 20 the preload names libuv's pool threads by parking
// each in the open of a FIFO for a moment (runtime/threadpool.ts). An app
// that ended in that moment (a script throwing at once) hung for ever:
// Node joins the pool at exit, and nothing released the parked threads
// (5 of 20 runs hung before the exit released them).
const APP = fixture('startup-exit-app').replace(/\.js$/, '.cjs');

for (const [how, code] of [['throw', 1], ['reject', 1], ['exit', 5]] as const) {
  test(`an app that ends at once (${how}) under the preload exits with ${code}, never hangs`, async () => {
    for (let i = 0; i < 10; i++) {
      const r = await runNode(['--import', 'spanfuse/register', APP], {
        SPANFUSE_OUTPUT_DIR: mkdtempSync(join(tmpdir(), 'spanfuse-startexit-')),
        EXIT_HOW: how,
      }, 15_000);
      assert.equal(r.signal, null, `run ${i}: killed after 15 s (hung at exit); stderr: ${r.stderr.slice(-1000)}`);
      assert.equal(r.code, code, `run ${i}: ${r.stderr.slice(-1000)}`);
    }
  });
}

// Node's own recursive mkdir loops for ever on a missing folder under /proc
// (procfs answers ENOENT while the parent exists), and the preload's start
// then held the app's start-up: the app never ran. Refused as a
// configuration error instead: the app runs, unprofiled, and says why.
test('an output folder under /proc is a configuration error, not a hang', async () => {
  const r = await runNode(['--import', 'spanfuse/register', APP], { SPANFUSE_OUTPUT_DIR: '/proc/spanfuse-out', EXIT_HOW: 'exit' }, 15_000);
  assert.equal(r.signal, null, `killed after 15 s (hung); stderr: ${r.stderr.slice(-1000)}`);
  assert.equal(r.code, 5, r.stderr);
  assert.match(r.stderr, /under \/proc/);
  assert.match(r.stderr, /profiling is off/);
});
