import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { encodeOtlpRequest, encodeOtlpRequestAsync, profileResource, spanfuseVersion } from '../../src/profile/index.js';
import type { WindowProfile } from '../../src/core/window.js';
import { handProfile, handWindow, newSpan, sampledWindow } from './fixtures.js';
import { anyValueText, decodeRequest } from './otlp-schema.js';
import { otlpObservations, pprofObservations } from './otlp-view.js';
import { children, hasProtoc, parseDecodeRaw, protoc, protocBytes } from './protoc.js';

const options = {
  resource: profileResource('checkout', { 'deployment.environment': 'test' }),
  scopeName: 'spanfuse',
  scopeVersion: spanfuseVersion(),
};

function sortedMap(m: Map<string, string[]>): Record<string, string[]> {
  return Object.fromEntries([...m].map(([k, v]) => [k, [...v].sort()]));
}

void test('the scope version is the package version', () => {
  assert.match(spanfuseVersion(), /^\d+\.\d+\.\d+/);
});

void test('request layout: resource, scope, one profile per sample type, dictionary zero entries', () => {
  const w = handWindow();
  const req = decodeRequest(encodeOtlpRequest(w, options));
  const d = req.dictionary;
  assert.equal(req.resource_profiles.length, 1);
  const rp = req.resource_profiles[0]!;
  const res = Object.fromEntries((rp.resource?.attributes ?? []).map((kv) => [kv.key, anyValueText(kv.value)]));
  assert.equal(res['service.name'], 'checkout');
  assert.equal(res['deployment.environment'], 'test');
  assert.equal(res['process.runtime.name'], 'nodejs');
  assert.equal(res['process.runtime.version'], process.versions.node);
  assert.ok(res['host.name'] !== undefined && res['host.name'] !== '');
  assert.deepEqual(rp.scope_profiles[0]?.scope, { name: 'spanfuse', version: spanfuseVersion(), attributes: [] });

  const profiles = rp.scope_profiles[0]?.profiles ?? [];
  const s = (i: number): string => d.string_table[i] ?? '?';
  assert.deepEqual(
    profiles.map((p) => `${s(p.sample_type!.type_strindex)}/${s(p.sample_type!.unit_strindex)}`),
    ['sample/count', 'wall/nanoseconds', 'cpu/nanoseconds'],
  );
  for (const p of profiles) {
    assert.equal(p.profile_id.toString('hex'), w.profileId);
    assert.equal(p.time_unix_nano, String(w.startUnixNs));
    assert.equal(p.duration_nano, String(w.endUnixNs - w.startUnixNs));
    assert.equal(p.period, '1000000');
    assert.equal(`${s(p.period_type!.type_strindex)}/${s(p.period_type!.unit_strindex)}`, 'cpu/nanoseconds');
    const attrs = p.attribute_indices.map((i) => `${s(d.attribute_table[i]!.key_strindex)}=${anyValueText(d.attribute_table[i]!.value)}`);
    assert.deepEqual(attrs, ['spanfuse.context.mode=async-hooks']);
    for (const sample of p.samples) {
      assert.equal(sample.values.length, sample.timestamps_unix_nano.length);
      for (const ts of sample.timestamps_unix_nano) {
        assert.ok(BigInt(ts) >= w.startUnixNs && BigInt(ts) < w.endUnixNs, 'timestamp inside the profile time range');
      }
    }
  }
  // Index 0 of every table is the zero value.
  assert.equal(d.string_table[0], '');
  assert.deepEqual(d.function_table[0], { name_strindex: 0, system_name_strindex: 0, filename_strindex: 0, start_line: '0' });
  assert.deepEqual(d.location_table[0], { mapping_index: 0, address: '0', lines: [], attribute_indices: [] });
  assert.deepEqual(d.mapping_table[0], { memory_start: '0', memory_limit: '0', file_offset: '0', filename_strindex: 0, attribute_indices: [] });
  assert.deepEqual(d.stack_table[0], { location_indices: [] });
  assert.equal(d.link_table[0]!.trace_id.toString('hex'), '0'.repeat(32));
  assert.equal(d.link_table[0]!.span_id.toString('hex'), '0'.repeat(16));
  assert.equal(d.attribute_table[0]!.key_strindex, 0);
  // Tables are deduplicated.
  assert.equal(new Set(d.string_table).size, d.string_table.length);
  assert.equal(new Set(d.link_table.map((l) => l.trace_id.toString('hex') + l.span_id.toString('hex'))).size, d.link_table.length);
  assert.equal(new Set(d.stack_table.map((x) => x.location_indices.join(','))).size, d.stack_table.length);
  // JS frames carry profile.frame.type=v8js.
  const frameType = d.attribute_table.findIndex((a) => s(a.key_strindex) === 'profile.frame.type' && anyValueText(a.value) === 'v8js');
  assert.ok(frameType > 0);
  for (const loc of d.location_table.slice(1)) assert.deepEqual(loc.attribute_indices, [frameType]);
});

void test('samples merge by identity {stack, attributes, link}, keeping each observation and timestamp', () => {
  const w = handWindow();
  const req = decodeRequest(encodeOtlpRequest(w, options));
  const wallProfile = req.resource_profiles[0]!.scope_profiles[0]!.profiles[1]!;
  // 4 pprof samples: two share stack+labels, so 3 OTLP samples.
  assert.equal(wallProfile.samples.length, 3);
  const merged = wallProfile.samples.find((x) => x.values.length === 2);
  assert.deepEqual(merged?.values, ['1000000', '1000000']);
  assert.deepEqual(merged?.timestamps_unix_nano, [String(w.startUnixNs + 1_000_000n), String(w.startUnixNs + 2_000_000n)]);
  // The sample outside any span has no link.
  assert.equal(wallProfile.samples.filter((x) => x.link_index === 0).length, 1);
  // The cpu profile leaves out the zero-CPU observation.
  const cpuProfile = req.resource_profiles[0]!.scope_profiles[0]!.profiles[2]!;
  assert.equal(cpuProfile.samples.length, 2);
});

void test('a real sampled window: OTLP stacks, labels, links, timestamps and values equal the pprof', () => {
  const spans = [newSpan('GET /a'), newSpan('GET /b'), newSpan('work')];
  const w = sampledWindow(spans, 30);
  const bytes = encodeOtlpRequest(w, options);
  const req = decodeRequest(bytes);
  const fromOtlp = sortedMap(otlpObservations(req));
  const fromPprof = sortedMap(pprofObservations(w.wall));
  assert.deepEqual(Object.keys(fromOtlp), ['sample/count', 'wall/nanoseconds', 'cpu/nanoseconds']);
  assert.deepEqual(fromOtlp, fromPprof);
  // Every span we entered shows up as a link with its trace id.
  const links = new Set(req.dictionary.link_table.map((l) => `${l.trace_id.toString('hex')}/${l.span_id.toString('hex')}`));
  const seen = spans.filter((sp) => links.has(`${sp.trace_id}/${sp.span_id}`));
  assert.ok(seen.length >= 2, `at least two of three spans were sampled (got ${seen.length})`);
  // trace_id/span_id are never attributes; span_name is.
  const keys = new Set(req.dictionary.attribute_table.map((a) => req.dictionary.string_table[a.key_strindex]));
  assert.ok(!keys.has('trace_id') && !keys.has('span_id') && !keys.has('end_timestamp_ns'));
  assert.ok(keys.has('span_name') && keys.has('thread.id') && keys.has('thread.name') && keys.has('local_root_span_id'));
  const threadId = req.dictionary.attribute_table.find((a) => req.dictionary.string_table[a.key_strindex] === 'thread.id');
  assert.equal(threadId?.value?.value, 'int_value', 'thread.id is an int attribute (semantic conventions)');
});

void test('heap and off-CPU profiles become profiles of their own sample types', () => {
  const w: WindowProfile = handWindow();
  w.heap = handProfile(
    [
      ['objects', 'count'],
      ['space', 'bytes'],
    ],
    [{ stack: [{ name: 'alloc', file: '/srv/app/a.js', line: 3 }], values: [2, 4096], labels: { 'thread.id': '1' } }],
    524288,
  );
  w.offCpu = handProfile([['off_cpu', 'nanoseconds']], [{ stack: [{ name: 'wait', file: '/srv/app/w.js', line: 9 }], values: [5000], labels: {} }]);
  const req = decodeRequest(encodeOtlpRequest(w, options));
  const obs = sortedMap(otlpObservations(req));
  assert.deepEqual(Object.keys(obs), ['sample/count', 'wall/nanoseconds', 'cpu/nanoseconds', 'objects/count', 'space/bytes', 'off_cpu/nanoseconds']);
  assert.deepEqual(obs['space/bytes'], ['alloc@/srv/app/a.js:3|thread.id=1|-|4096']);
  assert.deepEqual(obs['off_cpu/nanoseconds'], ['wait@/srv/app/w.js:9||-|5000']);
  const heapProfile = req.resource_profiles[0]!.scope_profiles[0]!.profiles[4]!;
  assert.equal(heapProfile.period, '524288');
});

void test('protoc --decode_raw reads the same field numbers and counts', (t) => {
  if (!hasProtoc()) {
    t.skip('protoc not installed (apt-get install protobuf-compiler); cross-check skipped');
    return;
  }
  const w = sampledWindow([newSpan('raw')], 20);
  const bytes = encodeOtlpRequest(w, options);
  const req = decodeRequest(bytes);
  const raw = parseDecodeRaw(protoc(['--decode_raw'], bytes));
  assert.deepEqual([...raw.fields.keys()].sort(), [1, 2]);
  // Empty messages (the zero entries) print as "" rather than { }, so count every value.
  const dict = children(raw, 2)[0];
  assert.equal(dict?.fields.get(5)?.length, req.dictionary.string_table.length, 'string_table = field 5');
  assert.equal(dict?.fields.get(4)?.length, req.dictionary.link_table.length, 'link_table = field 4');
  assert.equal(dict?.fields.get(7)?.length, req.dictionary.stack_table.length, 'stack_table = field 7');
  assert.equal(dict?.fields.get(2)?.length, req.dictionary.location_table.length, 'location_table = field 2');
  assert.equal(dict?.fields.get(3)?.length, req.dictionary.function_table.length, 'function_table = field 3');
  assert.equal(dict?.fields.get(6)?.length, req.dictionary.attribute_table.length, 'attribute_table = field 6');
  const scope = children(children(raw, 1)[0], 2)[0];
  const profiles = children(scope, 2);
  assert.equal(profiles.length, 3);
  for (const [i, p] of profiles.entries()) {
    const decoded = req.resource_profiles[0]!.scope_profiles[0]!.profiles[i]!;
    assert.equal(children(p, 2).length, decoded.samples.length, 'samples = field 2');
    // time_unix_nano is fixed64 (field 3): decode_raw prints it as 0x-hex.
    const time = p.fields.get(3)?.[0];
    assert.equal(typeof time === 'string' ? BigInt(time) : undefined, w.startUnixNs);
  }
});

void test('decodes with the official v1.11.0 protos when OTLP_PROTO_DIR points at them', (t) => {
  const dir = process.env['OTLP_PROTO_DIR'];
  const rel = 'opentelemetry/proto/collector/profiles/v1development/profiles_service.proto';
  if (dir === undefined || !existsSync(join(dir, rel)) || !hasProtoc()) {
    t.skip('set OTLP_PROTO_DIR to a checkout of opentelemetry-proto v1.11.0 (and install protoc) to run this check');
    return;
  }
  const span = newSpan('official');
  const w = sampledWindow([span], 30);
  const bytes = encodeOtlpRequest(w, options);
  const type = 'opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest';
  const text = protoc(['-I', dir, `--decode=${type}`, rel], bytes);
  // Re-encoding protoc's reading gives our bytes back: no unknown or
  // misnumbered field, and canonical field order.
  const again = protocBytes(['-I', dir, `--encode=${type}`, rel], Buffer.from(text));
  assert.ok(again.equals(Buffer.from(bytes)), 'protoc re-encodes the same bytes');
  assert.match(text, /string_table: "span_name"/);
  assert.match(text, /profile_id: "/);
  assert.match(text, /timestamps_unix_nano: \d+/);
  assert.match(text, /link_table \{\s+trace_id: "/);
  assert.match(text, new RegExp(`string_value: "${span.span_name}"`));
  assert.match(text, /sample_type \{\s+type_strindex: \d+\s+unit_strindex: \d+/);
});

void test('the sliced async encoder gives the same bytes as the one-call encoder', async () => {
  const w = sampledWindow([newSpan('a'), newSpan('b')], 20);
  const sync = encodeOtlpRequest(w, options);
  const sliced = await encodeOtlpRequestAsync(w, options, 7);
  assert.ok(Buffer.from(sync).equals(Buffer.from(sliced)));
});

void test('observations without a timestamp are summed into their own sample, timed ones keep theirs', () => {
  const f = { name: 'f', file: '/srv/app/f.js', line: 1 };
  const wall = handProfile(
    [['wall', 'nanoseconds']],
    [
      { stack: [f], values: [10], labels: { 'thread.name': 'main', end_timestamp_ns: 1_790_000_000_001_000_000n } },
      { stack: [f], values: [20], labels: { 'thread.name': 'main' } },
      { stack: [f], values: [30], labels: { 'thread.name': 'main' } },
    ],
  );
  const w = handWindow();
  const req = decodeRequest(encodeOtlpRequest({ ...w, wall }, options));
  const samples = req.resource_profiles[0]!.scope_profiles[0]!.profiles[0]!.samples;
  assert.deepEqual(
    samples.map((s) => ({ values: s.values, ts: s.timestamps_unix_nano })),
    [
      { values: ['10'], ts: ['1790000000001000000'] },
      { values: ['50'], ts: [] },
    ],
  );
});

void test('values past 2^53 or as BigInt are written exactly, summed and kept per observation', () => {
  const f = { name: 'f', file: '/srv/app/f.js', line: 1 };
  const g = { name: 'g', file: '/srv/app/g.js', line: 2 };
  const t = (ms: number): bigint => 1_790_000_000_000_000_000n + BigInt(ms) * 1_000_000n;
  const wall = handProfile(
    [['wall', 'nanoseconds']],
    [
      { stack: [f], values: [7], labels: { 'thread.name': 'main', end_timestamp_ns: t(1) } },
      { stack: [f], values: [0], labels: { 'thread.name': 'main', end_timestamp_ns: t(2) } },
      { stack: [f], values: [9], labels: { 'thread.name': 'main', end_timestamp_ns: t(3) } },
      { stack: [g], values: [1], labels: { 'thread.name': 'main' } },
      { stack: [g], values: [2], labels: { 'thread.name': 'main' } },
    ],
  );
  // A profile read from elsewhere can hold values a double cannot: the
  // writer then reads them from the samples themselves.
  (wall.sample[2] as { value: (number | bigint)[] }).value[0] = 2n ** 60n + 1n;
  (wall.sample[4] as { value: (number | bigint)[] }).value[0] = 2n ** 55n + 3n;
  const w = handWindow();
  const req = decodeRequest(encodeOtlpRequest({ ...w, wall }, options));
  const samples = req.resource_profiles[0]!.scope_profiles[0]!.profiles[0]!.samples;
  assert.deepEqual(
    samples.map((s) => ({ values: s.values, ts: s.timestamps_unix_nano })),
    [
      { values: ['7', String(2n ** 60n + 1n)], ts: [String(t(1)), String(t(3))] },
      { values: [String(2n ** 55n + 4n)], ts: [] },
    ],
  );
});
