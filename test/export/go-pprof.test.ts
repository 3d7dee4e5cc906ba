import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Diagnostics } from '../../src/core/diagnostics.js';
import { FileExporter } from '../../src/export/index.js';
import { newSpan, sampledWindow } from '../profile/fixtures.js';

void test('go tool pprof reads the written file and shows span_id/trace_id labels', async (t) => {
  const go = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (go.status !== 0) {
    t.skip('go is not installed (apt-get install golang-go); pprof readability check skipped');
    return;
  }
  const dir = await mkdtemp(join(tmpdir(), 'spanfuse-gopprof-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const ex = new FileExporter({ dir, diagnostics: new Diagnostics(() => undefined) });
  const span = newSpan('GET /go');
  assert.equal((await ex.export(sampledWindow([span], 60))).kind, 'success');
  const [file] = await readdir(dir);
  const out = spawnSync('go', ['tool', 'pprof', '-raw', join(dir, file ?? '')], {
    encoding: 'utf8',
    env: { ...process.env, HOME: process.env['HOME'] ?? tmpdir(), PPROF_TMPDIR: dir },
    timeout: 120_000,
  });
  assert.equal(out.status, 0, out.stderr);
  assert.match(out.stdout, /sample\/count wall\/nanoseconds cpu\/nanoseconds/);
  assert.match(out.stdout, new RegExp(`span_id:\\[${span.span_id}\\]`));
  assert.match(out.stdout, new RegExp(`trace_id:\\[${span.trace_id}\\]`));
  assert.match(out.stdout, /span_name:\[GET \/go\]/);
  assert.match(out.stdout, /end_timestamp_ns:\[\d+\]/);
});
