import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { Profile } from '../../src/core/pprof.js';
import { Diagnostics } from '../../src/core/diagnostics.js';
import { createPyroscopeExporter, DEFAULT_RETRY, pyroscopeIngestUrl, pyroscopeName } from '../../src/export/index.js';
import type { PyroscopeExporterOptions } from '../../src/export/index.js';
import { handProfile, handWindow, newSpan, sampledWindow } from '../profile/fixtures.js';
import { parseMultipart } from './multipart-parse.js';
import { Receiver } from './receiver.js';

const quiet = (): Diagnostics => new Diagnostics(() => undefined);

function exporter(url: string, extra: Partial<PyroscopeExporterOptions> = {}) {
  return createPyroscopeExporter({
    serverUrl: new URL(url),
    appName: 'checkout',
    tags: { env: 'test', region: 'eu-1' },
    auth: { kind: 'bearer', token: 'tok-123' },
    tenantId: 'tenant-a',
    timeoutMs: 2000,
    retry: { ...DEFAULT_RETRY, initialBackoffMs: 10, maxBackoffMs: 40 },
    queue: { maxItems: 8, maxBytes: 8 * 1024 * 1024 },
    diagnostics: quiet(),
    ...extra,
  });
}

void test('ingest URL keeps a path prefix; app names carry sorted tags', () => {
  assert.equal(pyroscopeIngestUrl(new URL('http://h:4040')).href, 'http://h:4040/ingest');
  assert.equal(pyroscopeIngestUrl(new URL('https://h/prefix/')).href, 'https://h/prefix/ingest');
  assert.equal(pyroscopeName('app', { z: '1', a: 'x y' }), 'app{a=x_y,z=1}');
});

void test('POSTs a multipart gzip pprof to /ingest with name, from/until, spyName, sampleRate and auth', async (t) => {
  const rx = await Receiver.start();
  t.after(() => rx.close());
  const ex = exporter(rx.url);
  const span = newSpan('GET /pay');
  const w = sampledWindow([span], 30);
  assert.equal((await ex.export(w)).kind, 'success');
  await ex.shutdown(500);
  assert.equal(rx.received.length, 1);
  const r = rx.received[0]!;
  assert.equal(r.url.pathname, '/ingest');
  const q = r.url.searchParams;
  assert.equal(q.get('name'), 'checkout{env=test,region=eu-1}');
  assert.equal(q.get('from'), String(w.startUnixNs / 1_000_000_000n));
  assert.ok(Number(q.get('until')) >= Number(q.get('from')) + 1);
  assert.ok(BigInt(q.get('until')!) * 1_000_000_000n >= w.endUnixNs);
  assert.equal(q.get('spyName'), 'nodespy');
  assert.equal(q.get('sampleRate'), '1000', '1000 µs interval = 1000 Hz');
  assert.equal(q.get('format'), 'pprof');
  assert.equal(r.headers['authorization'], 'Bearer tok-123');
  assert.equal(r.headers['x-scope-orgid'], 'tenant-a');
  const parts = parseMultipart(r.body, r.headers['content-type'] ?? '');
  assert.equal(parts.length, 1);
  assert.match(parts[0]!.headers['content-disposition'] ?? '', /name="profile"/);
  const p = Profile.decode(gunzipSync(parts[0]!.body));
  const strings = p.stringTable.strings;
  assert.ok(strings.includes(span.span_id) && strings.includes(span.trace_id) && strings.includes('span_name'));
  assert.equal(p.sample.length, w.wall.sample.length);
});

void test('sampleRate follows the sampling interval; basic auth; heap as its own request', async (t) => {
  const rx = await Receiver.start();
  t.after(() => rx.close());
  const ex = exporter(rx.url, { auth: { kind: 'basic', user: 'u', password: 'p:w' } });
  const w = { ...handWindow(), samplingIntervalMicros: 10_000 };
  w.heap = handProfile([['space', 'bytes']], [{ stack: [{ name: 'a', file: '/x.js', line: 1 }], values: [10], labels: {} }]);
  assert.equal((await ex.export(w)).kind, 'success');
  await ex.shutdown(500);
  assert.equal(rx.received.length, 2);
  for (const r of rx.received) {
    assert.equal(r.url.searchParams.get('sampleRate'), '100');
    assert.equal(r.headers['authorization'], `Basic ${Buffer.from('u:p:w').toString('base64')}`);
  }
  const types = rx.received.map((r) => {
    const p = Profile.decode(gunzipSync(parseMultipart(r.body, r.headers['content-type'] ?? '')[0]!.body));
    return p.sampleType.map((st) => p.stringTable.strings[Number(st.type)]).join(',');
  });
  assert.deepEqual(types, ['sample,wall,cpu', 'space']);
});

void test('503 then success is retried and delivered; 401 is a counted failure', async (t) => {
  const rx = await Receiver.start();
  t.after(() => rx.close());
  rx.handler = (_r, i) => ({ status: i === 0 ? 503 : i === 1 ? 200 : 401, body: i === 2 ? 'invalid token' : '' });
  const diagnostics = quiet();
  const ex = exporter(rx.url, { diagnostics });
  assert.equal((await ex.export(handWindow())).kind, 'success');
  const o = await ex.export(handWindow());
  assert.equal(o.kind, 'failure');
  assert.match(o.kind === 'failure' ? o.reason : '', /HTTP 401: invalid token/);
  assert.equal(rx.received.length, 3);
  assert.equal(ex.stats()['failed'], 1);
  assert.equal(diagnostics.counters()['errors.export.pyroscope'], 1);
  await ex.shutdown(100);
});
