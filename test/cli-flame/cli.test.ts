import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { Function as PFunction, Label, Line, Location, Profile, Sample, StringTable, ValueType } from '../../src/core/pprof.js';
import { encodePprofSync } from '../../src/profile/index.js';
import { writeSyntheticWindows } from '../debug/synthetic.js';
import { cli, OPERATION, profiledRun } from './helpers.js';

let dir = '';
let work = '';

/** The JSON document inside a generated page. */
function pageData(path: string): { names: string[]; title: string; growth?: { name: string; onlyInTail: boolean }[]; kind: string } {
  const html = readFileSync(path, 'utf8');
  const m = /<script type="application\/json" id="flame-data">([\s\S]*?)<\/script>/.exec(html);
  assert.ok(m, 'page has its data block');
  assert.doesNotMatch(html, /<script[^>]+src=|<link[^>]+href=|https?:\/\//, 'the page loads nothing from elsewhere');
  return JSON.parse(m[1]!);
}

before(async () => {
  const r = await profiledRun();
  assert.equal(r.run.code, 0, r.run.stderr);
  dir = r.dir;
  work = mkdtempSync(join(tmpdir(), 'spanfuse-flame-cli-'));
});

test('flame of the tail spans of an operation renders their burn function; title says what was selected', async () => {
  const out = join(work, 'tail.html');
  const r = await cli(['flame', dir, '--operation', OPERATION, '--tail', '-o', out]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /tail spans of operation GET \/checkout \(SERVER\)/);
  const doc = pageData(out);
  assert.ok(doc.names.includes('tail_only_burn'));
  assert.ok(doc.names.includes('common_work'));
  assert.match(doc.title, /tail spans of operation GET \/checkout/);
  // The normal spans never run tail_only_burn.
  const normal = join(work, 'normal.html');
  const n = await cli(['flame', dir, '--operation', 'GET /checkout', '--normal', '--cpu', '-o', normal]);
  assert.equal(n.code, 0, n.stderr);
  const nd = pageData(normal);
  assert.ok(nd.names.includes('common_work'));
  assert.ok(!nd.names.includes('tail_only_burn'), 'normal spans must not show the tail-only function');
});

test('OTLP files alone give the same selection (trace links and attributes)', async () => {
  const only = join(work, 'otlp-only');
  mkdirSync(only);
  for (const f of readdirSync(dir).filter((f) => f.endsWith('.otlp.pb'))) copyFileSync(join(dir, f), join(only, f));
  const out = join(work, 'otlp.html');
  const r = await cli(['flame', only, '--operation', OPERATION, '--tail', '-o', out]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(pageData(out).names.includes('tail_only_burn'));
});

test('tails lists tail spans with figures and a command that draws one; --span and --trace select it', async () => {
  const r = await cli(['tails', dir, '--limit', '100']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /GET \/checkout \(SERVER\)\s+\[budget\]/);
  assert.match(r.stdout, /duration \d+\.\d ms \(threshold 25\.0 ms\), cpu \d/);
  // On a loaded machine a span without the burn can cross the budget too:
  // take one whose top frames (from its own samples) show the burn.
  const block = r.stdout.split('\n\n').find((b) => /top frames: .*tail_only_burn/.test(b));
  assert.ok(block, r.stdout);
  const cmd = /spanfuse flame (\S+) --span ([0-9a-f]{16}) -o (\S+)/.exec(block);
  assert.ok(cmd, block);
  const out = join(work, 'span.html');
  const f = await cli(['flame', cmd[1]!, '--span', cmd[2]!, '-o', out]);
  assert.equal(f.code, 0, f.stderr);
  assert.ok(pageData(out).names.includes('tail_only_burn'));
  const spans = readFileSync(join(dir, 'spans.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const traceId = spans.find((s: { spanId: string }) => s.spanId === cmd[2])?.traceId as string;
  const t = await cli(['flame', dir, '--trace', traceId, '-o', join(work, 'trace.html')]);
  assert.equal(t.code, 0, t.stderr);
  assert.match(t.stdout, new RegExp(`trace ${traceId}`));
});

test('top lists the burn function first for the tail spans', async () => {
  const r = await cli(['top', dir, '--operation', OPERATION, '--tail', '--cpu', '--limit', '5']);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split('\n');
  assert.match(lines[0]!, /tail spans of operation/);
  assert.match(lines[2]!, /tail_only_burn/, r.stdout);
});

test('diff marks the function only tail spans run and lists it first', async () => {
  const out = join(work, 'diff.html');
  const r = await cli(['diff', dir, '--operation', OPERATION, '--cpu', '-o', out]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /grows most: tail_only_burn \(only in tail\)/);
  const doc = pageData(out);
  assert.equal(doc.kind, 'diff');
  assert.equal(doc.growth?.[0]?.name, 'tail_only_burn');
  assert.equal(doc.growth?.[0]?.onlyInTail, true);
  assert.ok(!doc.growth?.some((g) => g.name === 'common_work' && g.onlyInTail), 'common_work runs in normal spans too');
});

test('plain (uncompressed) pprof from another tool is read where its labels allow', async () => {
  const st = new StringTable();
  const fn = (id: number, name: string): PFunction => new PFunction({ id, name: st.dedup(name), systemName: st.dedup(name), filename: st.dedup('main.go') });
  const p = new Profile({
    sampleType: [new ValueType({ type: st.dedup('samples'), unit: st.dedup('count') }), new ValueType({ type: st.dedup('cpu'), unit: st.dedup('nanoseconds') })],
    function: [fn(1, 'main.main'), fn(2, 'main.handler')],
    location: [new Location({ id: 1, line: [new Line({ functionId: 1 })] }), new Location({ id: 2, line: [new Line({ functionId: 2 })] })],
    sample: [
      new Sample({ locationId: [2, 1], value: [3, 30_000_000], label: [new Label({ key: st.dedup('span_id'), str: st.dedup('00f067aa0ba902b7') })] }),
      new Sample({ locationId: [1], value: [1, 10_000_000] }),
    ],
    stringTable: st,
    periodType: new ValueType({ type: st.dedup('cpu'), unit: st.dedup('nanoseconds') }),
    period: 10_000_000,
  });
  const file = join(work, 'go-cpu.pprof');
  writeFileSync(file, encodePprofSync(p));
  const out = join(work, 'go.html');
  const r = await cli(['flame', file, '--span', '00f067aa0ba902b7', '--cpu', '-o', out]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /3 samples, 1 span with samples/);
  assert.ok(pageData(out).names.includes('main.handler'));
});

test('long reads report progress on stderr', async () => {
  const many = join(work, 'many');
  writeSyntheticWindows(many, { windows: 24, samples: 2400 });
  const r = await cli(['top', many, '--limit', '1']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /spanfuse top: read \d+\/24 windows/);
  assert.match(r.stderr, /read 24\/24 windows/);
});

test('every command has --help (exit 0)', async () => {
  for (const cmd of ['flame', 'diff', 'top', 'tails']) {
    const r = await cli([cmd, '--help']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^usage: spanfuse ${cmd}`));
    assert.match(r.stdout, /exit codes: 0 done/);
  }
});

test('errors are one line with the documented exit code', async () => {
  const bad = join(work, 'bad');
  mkdirSync(bad);
  const empty = join(bad, 'empty.pb.gz');
  writeFileSync(empty, '');
  const corrupt = join(bad, 'corrupt.pb.gz');
  writeFileSync(corrupt, Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 0]), Buffer.from('not really gzip at all')]));
  const text = join(bad, 'notes.pb');
  writeFileSync(text, 'this is a text file, not a profile\n');
  const heapSt = new StringTable();
  const heap = new Profile({
    sampleType: [new ValueType({ type: heapSt.dedup('alloc_space'), unit: heapSt.dedup('bytes') })],
    sample: [new Sample({ locationId: [], value: [1024] })],
    stringTable: heapSt,
  });
  const foreign = join(bad, 'heap.pb.gz');
  writeFileSync(foreign, gzipSync(encodePprofSync(heap)));
  const emptyDir = join(bad, 'nothing-here');
  mkdirSync(emptyDir);
  const garbageOtlp = join(bad, 'x.otlp.pb');
  writeFileSync(garbageOtlp, Buffer.from([0x0a, 0xff, 0xff, 0x01]));

  const cases: { args: string[]; code: number; message: RegExp }[] = [
    { args: ['flame', join(bad, 'missing')], code: 3, message: /missing: no such file or folder/ },
    { args: ['flame', empty], code: 3, message: /empty\.pb\.gz: empty file/ },
    { args: ['flame', corrupt], code: 3, message: /corrupt\.pb\.gz: corrupt gzip/ },
    { args: ['flame', text], code: 3, message: /notes\.pb: (not a pprof profile|pprof sample types)/ },
    { args: ['flame', foreign], code: 3, message: /heap\.pb\.gz: pprof sample types alloc_space\/bytes; flamegraphs read/ },
    { args: ['flame', emptyDir], code: 3, message: /no spanfuse window files/ },
    { args: ['flame', garbageOtlp], code: 3, message: /x\.otlp\.pb: not an OTLP profiles request/ },
    { args: ['flame', dir, '--span', 'ffffffffffffffff'], code: 4, message: /no samples of span ffffffffffffffff in \d+ windows/ },
    { args: ['flame', dir, '--trace', '0123456789abcdef0123456789abcdef'], code: 4, message: /no samples of trace/ },
    { args: ['flame', dir, '--operation', 'GET /nowhere'], code: 4, message: /no samples of operation "GET \/nowhere"; operations with samples: .*GET \/checkout/ },
    { args: ['diff', dir, '--operation', 'GET /nowhere'], code: 4, message: /no samples of operation/ },
    { args: ['tails', emptyDir], code: 3, message: /no spanfuse window files/ },
    { args: ['tails', empty], code: 3, message: /not a folder/ },
    { args: ['flame', dir, '--span', 'xyz'], code: 2, message: /--span: expected 16 hex characters/ },
    { args: ['flame', dir, '--tail', '--normal'], code: 2, message: /--tail and --normal exclude each other/ },
    { args: ['flame', dir, '--cpu', '--wall'], code: 2, message: /--cpu, --wall exclude each other/ },
    { args: ['flame', dir, '--bogus'], code: 2, message: /Unknown option '--bogus'/ },
    { args: ['flame'], code: 2, message: /give the output folder or profile files/ },
    { args: ['diff', dir], code: 2, message: /--operation NAME is required/ },
    { args: ['top', dir, '--limit', '0'], code: 2, message: /--limit: expected a whole number/ },
  ];
  for (const c of cases) {
    const r = await cli(c.args);
    assert.equal(r.code, c.code, `${c.args.join(' ')}: exit ${r.code}, stderr ${r.stderr}`);
    assert.match(r.stderr, c.message, c.args.join(' '));
    const first = r.stderr.split('\n')[0]!;
    assert.match(first, new RegExp(`^spanfuse ${c.args[0]}: `), 'one line naming the command');
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    assert.equal(r.stdout, '', 'nothing on stdout');
  }
});
