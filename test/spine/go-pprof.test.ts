import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fixture, runNode } from '../support/child.js';
import { wallFiles } from '../support/pprof.js';

const hasGo = spawnSync('go', ['version']).status === 0;

// An independent reader: Go's pprof must read our file and see the span labels.
test('go tool pprof reads a produced profile and shows span_id/trace_id labels', async (t) => {
  if (!hasGo) {
    assert.notEqual(process.env.SPANFUSE_REQUIRE_GO, '1', 'go is required here (SPANFUSE_REQUIRE_GO=1) but not installed');
    t.skip('go is not installed (apt-get install golang-go)');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-go-'));
  const r = await runNode(['--require', 'spanfuse/register', fixture('preload-cjs').replace(/\.js$/, '.cjs')], {
    SPANFUSE_OUTPUT_DIR: dir,
    SPANFUSE_SAMPLING_INTERVAL_US: '1000',
  });
  assert.equal(r.code, 0, r.stderr);
  const [file] = wallFiles(dir);
  assert.ok(file);
  const raw = spawnSync('go', ['tool', 'pprof', '-raw', file], { encoding: 'utf8', env: { ...process.env, HOME: dir } });
  assert.equal(raw.status, 0, raw.stderr);
  assert.match(raw.stdout, /span_id:\[[0-9a-f]{16}\]/);
  assert.match(raw.stdout, /trace_id:\[[0-9a-f]{32}\]/);
  assert.match(raw.stdout, /span_name:\[cjs-span\]/);
  assert.match(raw.stdout, /thread\.id:\[\d+\]/);
  assert.match(raw.stdout, /sample\/count wall\/nanoseconds cpu\/nanoseconds/);
  const tags = spawnSync('go', ['tool', 'pprof', '-tags', file], { encoding: 'utf8', env: { ...process.env, HOME: dir } });
  assert.equal(tags.status, 0, tags.stderr);
  assert.match(tags.stdout, /span_id: Total/);
  assert.match(tags.stdout, /trace_id: Total/);
});
