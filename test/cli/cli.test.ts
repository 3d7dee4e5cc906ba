// The `spanfuse` command's error paths: one-line messages with a --help hint,
// the documented exit statuses, no doubled prefix; summary of folders with a
// corrupt window file, broken span lines and a rotated span file.
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { fixture, runNode } from '../support/child.js';

const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const cli = (args: string[], env: Record<string, string> = {}) => runNode([CLI, ...args], env, 60_000);
const tmp = (): string => mkdtempSync(join(tmpdir(), 'spanfuse-cli-'));

/** stderr is exactly one line, with one `spanfuse:` prefix and (for usage errors) a --help hint. */
function oneLine(stderr: string, hint: RegExp | undefined): string {
  const lines = stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `expected one line, got:\n${stderr}`);
  const l = lines[0] ?? '';
  assert.match(l, /^spanfuse: /);
  assert.doesNotMatch(l, /spanfuse: spanfuse:/);
  assert.doesNotMatch(l, /usage:/);
  if (hint !== undefined) assert.match(l, hint);
  return l;
}

/** A real output folder: the exit fixture profiled with the preload. */
let real: Promise<string> | undefined;
function realOutput(): Promise<string> {
  real ??= (async () => {
    const dir = tmp();
    const r = await runNode(['--import', 'spanfuse/register', fixture('exit-app')], { SPANFUSE_OUTPUT_DIR: dir, SPANFUSE_SAMPLING_INTERVAL_US: '1000' });
    assert.equal(r.code, 0, r.stderr);
    return dir;
  })();
  return real;
}

void test('usage errors: one line, a --help hint, exit 2', async () => {
  const cases: [string[], RegExp, RegExp][] = [
    [['bogus'], /unknown command "bogus"/, /see: spanfuse --help/],
    [['--bogus'], /unknown option "--bogus"/, /see: spanfuse --help/],
    [['summary', 'a', 'b'], /summary takes one folder, got 2 arguments/, /see: spanfuse summary --help/],
    [['summary', '--top', '3'], /Unknown option '--top'/, /see: spanfuse summary --help/],
    [['demo', 'extra'], /Unexpected argument 'extra'/, /see: spanfuse demo --help/],
    [['demo', '--duration', '0'], /--duration: expected a whole number from 1 to 3600, got "0"/, /see: spanfuse demo --help/],
    [['version', 'x'], /version takes no arguments/, /see: spanfuse --help/],
  ];
  for (const [args, what, hint] of cases) {
    const r = await cli(args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(oneLine(r.stderr, hint), what);
    assert.equal(r.stdout, '');
  }
});

void test('a bad configuration: exit 2, each problem listed once, no doubled prefix', async () => {
  const r = await cli(['demo', '--duration', '1'], { SPANFUSE_WINDOW_MS: 'abc' });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /^spanfuse: invalid configuration:\n {2}- SPANFUSE_WINDOW_MS: /);
  assert.doesNotMatch(r.stderr, /spanfuse: spanfuse:/);
});

void test('help and version: --help, -h, help CMD, summary --help, -v, --version, version', async () => {
  for (const args of [['--help'], ['-h'], ['help'], []]) {
    const r = await cli(args);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /usage: spanfuse <command>/);
    assert.match(r.stdout, /exit status: 0 ok, 1 failure inside spanfuse, 2 bad command line or configuration, 3 no spanfuse output found/);
  }
  for (const args of [['summary', '--help'], ['help', 'summary'], ['summary', '-h']]) {
    const r = await cli(args);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^usage: spanfuse summary \[DIR\]/);
  }
  const pkg = (await import('../../src/core/version.js')).spanfuseVersion();
  for (const args of [['-v'], ['--version'], ['version']]) {
    const r = await cli(args);
    assert.equal(r.code, 0);
    assert.equal(r.stdout.trim(), pkg);
  }
});

void test('summary: a missing or empty folder is a clear one-line message with exit 3', async () => {
  const empty = tmp();
  writeFileSync(join(empty, 'notes.txt'), 'not spanfuse output\n');
  const e = await cli(['summary', empty]);
  assert.equal(e.code, 3, e.stderr);
  assert.match(oneLine(e.stderr, undefined), /no spanfuse output in .*: no window files \(\*\.pb\.gz\) and no spans\.jsonl/);
  const m = await cli(['summary', join(empty, 'nope')]);
  assert.equal(m.code, 3);
  assert.match(oneLine(m.stderr, undefined), /no folder .*nope/);
  const f = await cli(['summary', join(empty, 'notes.txt')]);
  assert.equal(f.code, 2);
  assert.match(oneLine(f.stderr, /see: spanfuse summary --help/), /is a file, not an output folder/);
});

void test('summary with no folder uses SPANFUSE_OUTPUT_DIR', async () => {
  const dir = await realOutput();
  const r = await cli(['summary'], { SPANFUSE_OUTPUT_DIR: dir });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`output: +${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  const gone = await cli(['summary'], { SPANFUSE_OUTPUT_DIR: join(dir, 'missing') });
  assert.equal(gone.code, 3);
  assert.match(gone.stderr, /\(from SPANFUSE_OUTPUT_DIR\)/);
});

void test('summary: a corrupt .pb.gz is skipped and named, the rest is summarised', async () => {
  const good = await realOutput();
  const dir = tmp();
  const walls = readdirSync(good).filter((f) => /^spanfuse-.*[0-9a-f]{32}\.pb\.gz$/.test(f));
  assert.ok(walls.length >= 1);
  for (const f of readdirSync(good)) copyFileSync(join(good, f), join(dir, f));
  const bad = 'spanfuse-20260101T000000000Z-0123456789abcdef0123456789abcdef.pb.gz';
  writeFileSync(join(dir, bad), Buffer.from([0x1f, 0x8b, 0x08, 0x00, 1, 2, 3]));
  const r = await cli(['summary', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`windows: +${walls.length} pprof files \\(\\*\\.pb\\.gz\\), 1 unreadable \\(skipped\\)`));
  assert.match(r.stdout, new RegExp(`skipped: +${bad}: `));
  assert.match(r.stdout, /exit_burn|before-exit/);
});

void test('summary: rotated spans.1.jsonl is read and truncated lines are counted as skipped', async () => {
  const dir = tmp();
  const span = (i: number): string =>
    JSON.stringify({ traceId: 'a'.repeat(32), spanId: i.toString(16).padStart(16, '0'), name: 'op', kind: 1, startTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(i)), endTimeUnixNano: '0', attributes: {}, status: { code: 0 } });
  writeFileSync(join(dir, 'spans.1.jsonl'), `${[1, 2, 3].map(span).join('\n')}\n`);
  // A line cut short in the middle, then more whole lines (and a cut last line).
  writeFileSync(join(dir, 'spans.jsonl'), `${span(4)}\n${span(5).slice(0, 40)}\n${span(6)}\n${span(7)}\n${span(8).slice(0, 20)}`);
  const r = await cli(['summary', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /spans: +6 spans \(spans\.1\.jsonl \+ spans\.jsonl\), 2 broken lines skipped/);
});
