// The demo says which Node and context mode it ran on and ends with next
// steps whose `go tool pprof` commands work on this run's files.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ROOT, runNode } from '../support/child.js';
import { readPprof, wallFiles } from '../support/pprof.js';

const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const hasGo = spawnSync('go', ['version']).status === 0;

void test('demo: Node version and context mode, tail spans and working go tool pprof commands', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-demo-'));
  const r = await runNode([CLI, 'demo', '--duration', '4'], { SPANFUSE_OUTPUT_DIR: dir }, 120_000);
  assert.equal(r.code, 0, r.stderr);
  const mode = /context mode (async-context-frame|async-hooks)/.exec(r.stdout)?.[1];
  assert.ok(mode !== undefined, r.stdout);
  assert.ok(r.stdout.includes(`spanfuse demo on Node ${process.version} (${process.execPath}`), r.stdout);
  assert.match(r.stdout, /\nnext steps:\n/);
  assert.match(r.stdout, /node --import spanfuse\/register app\.js/);
  // The flamegraph page of the slowest span that has samples is on disk.
  const flame = /slowest span with samples +[0-9a-f]{16} .+ ms: (\S+\.html)\n/.exec(r.stdout);
  assert.ok(flame?.[1] !== undefined && existsSync(flame[1]), r.stdout);
  // The load runs in a process of its own: no sample of the profiled one is
  // in the load's code (which, run in the server's thread, was counted as
  // context loss), while the service's own functions are sampled.
  const inFile = (suffix: string): number => {
    let n = 0;
    for (const f of wallFiles(dir)) n += readPprof(f).samples.filter((smp) => smp.files.some((file) => file.endsWith(suffix))).length;
    return n;
  };
  assert.ok(inFile('/demo/service.js') > 0, 'no sample in the demo service');
  assert.equal(inFile('/demo/load-child.js'), 0, 'samples of the load in the profiled process');
  const tails = /tail spans: +(\d+) in /.exec(r.stdout);
  assert.ok(tails !== null, r.stdout);
  const commands = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('    go tool pprof'))
    .map((l) => l.replace(/\s+#.*$/, '').trim());
  assert.ok(commands.some((c) => c.includes('-top')), r.stdout);
  assert.ok(commands.some((c) => c.includes('-tagfocus=')), r.stdout);
  assert.ok(commands.some((c) => c.includes('-http=')), r.stdout);
  if (!hasGo) {
    t.diagnostic('go not installed: the printed go tool pprof commands were not run');
    return;
  }
  for (const c of commands.filter((x) => !x.includes('-http='))) {
    const out = spawnSync('sh', ['-c', c], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    assert.equal(out.status, 0, `${c}: ${out.stderr}`);
    assert.doesNotMatch(out.stderr + out.stdout, /matched no samples/, c);
    if (c.includes('-tagfocus=')) assert.match(out.stdout, /Active filters:\s+tagfocus=/, c);
  }
});
