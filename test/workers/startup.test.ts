import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fixture, runNode } from '../support/child.js';

function spansOf(dir: string): Array<{ name: string; attributes: Record<string, unknown> }> {
  const p = join(dir, 'spans.jsonl');
  if (!existsSync(p)) return [];
  return readFileSync(p, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { name: string; attributes: Record<string, unknown> });
}

test('the first span of a process, blocked 200 ms in read(), gets kernel counters and its off-CPU time', { skip: process.platform !== 'linux' }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-first-'));
  const r = await runNode(['--import', 'spanfuse/register', fixture('worker-first-span-app')], {
    SPANFUSE_OUTPUT_DIR: dir,
    SPANFUSE_TAIL_THRESHOLD_MS: '150',
    SPANFUSE_SAMPLING_INTERVAL_US: '2000',
    BLOCK_MS: '200',
  });
  assert.equal(r.code, 0, r.stderr);
  const span = spansOf(dir).find((s) => s.name === 'first-read');
  assert.ok(span, 'first-read not in spans.jsonl');
  const a = span.attributes;
  assert.ok(Number(a['test.blocked_ms']) >= 150, `blocked only ${String(a['test.blocked_ms'])} ms`);
  assert.equal(a['profiler.tail'], true);
  assert.equal(typeof a['profiler.ctx_switches.voluntary'], 'number', `no voluntary switches: ${JSON.stringify(a)}`);
  // Blocked in read(): the thread slept at least once.
  assert.ok(Number(a['profiler.ctx_switches.voluntary']) >= 1, JSON.stringify(a));
  assert.ok(Number(a['profiler.offcpu.time_ns']) >= 100e6, `off-CPU ${String(a['profiler.offcpu.time_ns'])} misses the 200 ms read`);
});

const LATE_APP = `
import http from 'node:http';
import { start } from 'spanfuse';
const server = http.createServer().listen(0, '127.0.0.1', async () => {
  const first = start();
  await first.shutdown();
  const second = start();
  await second.shutdown();
  server.close();
});
`;

test('starting after server.listen() warns once, with the fix; the preload does not warn', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-late-'));
  const late = await runNode(['--input-type=module', '-e', LATE_APP], { SPANFUSE_OUTPUT_DIR: dir });
  assert.equal(late.code, 0, late.stderr);
  const warnings = late.stderr.split('\n').filter((l) => l.includes('SPANFUSE_LATE_START'));
  assert.equal(warnings.length, 1, late.stderr);
  assert.match(warnings[0]!, /a server is already listening/);
  assert.match(warnings[0]!, /--import spanfuse\/register/);
  const early = await runNode(['--import', 'spanfuse/register', '--input-type=module', '-e', "import http from 'node:http'; const s = http.createServer().listen(0, '127.0.0.1', () => s.close());"], { SPANFUSE_OUTPUT_DIR: dir });
  assert.equal(early.code, 0, early.stderr);
  assert.doesNotMatch(early.stderr, /SPANFUSE_LATE_START/);
});
