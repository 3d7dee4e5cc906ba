// SIGTERM / SIGINT: with no handler of the app's own, the last window and the
// spans are written synchronously and the signal then ends the process as it
// would have (killed by the signal: status 143 / 130). With a handler of the
// app's own, spanfuse does nothing extra and the app decides.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { checkWindows, faultFixture, spanLines, startNode, tmp } from './helpers.js';

const hasGunzip = spawnSync('gunzip', ['--version']).status === 0;

function gunzipTest(dir: string): void {
  if (!hasGunzip) return;
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.pb.gz'))) {
    const r = spawnSync('gunzip', ['-t', join(dir, f)], { encoding: 'utf8' });
    assert.equal(r.status, 0, `gunzip -t ${f}: ${r.stderr}`);
  }
}

for (const sig of ['SIGTERM', 'SIGINT'] as const) {
  void test(`${sig} without an app handler writes the last window and the spans, and the signal still ends the process`, async () => {
    const dir = tmp();
    const run = startNode(['--import', 'spanfuse/register', faultFixture('signal-app')], {
      SPANFUSE_OUTPUT_DIR: dir,
      SPANFUSE_WINDOW_MS: '60000',
      SPANFUSE_SAMPLING_INTERVAL_US: '1000',
    });
    const ready = await run.line(/^ready \d+/);
    const endedBefore = Number(ready.split(' ')[1]);
    run.child.kill(sig);
    const r = await run.done;
    assert.equal(r.code, null, `exited with ${r.code} instead of being killed: ${r.stderr}`);
    assert.equal(r.signal, sig, r.stderr);
    const files = checkWindows(dir);
    assert.deepEqual(files.broken, []);
    assert.equal(files.byId.size, 1, 'the one partial window (60 s windows) was not written');
    gunzipTest(dir);
    const spans = spanLines(dir);
    assert.ok(spans.lines >= endedBefore, `${spans.lines} spans written, ${endedBefore} had ended before the signal`);
    assert.ok(spans.names.every((n) => n === 'signal-work'));
  });

  void test(`${sig} with the app's own handler: spanfuse adds nothing, the app's shutdown() writes the window`, async () => {
    const dir = tmp();
    const run = startNode(['--import', 'spanfuse/register', faultFixture('signal-app')], {
      SPANFUSE_OUTPUT_DIR: dir,
      SPANFUSE_WINDOW_MS: '60000',
      FAULT_OWN_HANDLER: '1',
    });
    await run.line(/^ready \d+/);
    run.child.kill(sig);
    const r = await run.done;
    assert.equal(r.signal, null, 'spanfuse ended the process although the app handles the signal');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`handled ${sig}`));
    const files = checkWindows(dir);
    assert.deepEqual(files.broken, []);
    assert.equal(files.byId.size, 1);
    gunzipTest(dir);
    assert.ok(spanLines(dir).lines > 0);
  });
}

