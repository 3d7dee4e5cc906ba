import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync, gzipSync } from 'node:zlib';
import { context } from '@opentelemetry/api';
import { isTracingSuppressed } from '@opentelemetry/core';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { Diagnostics } from '../../src/core/diagnostics.js';
import { createOtlpHttpExporter, DEFAULT_RETRY, ExportPipeline } from '../../src/export/index.js';
import type { OtlpHttpExporterOptions, RetryPolicy } from '../../src/export/index.js';
import { encodeOtlpRequest, profileResource, spanfuseVersion } from '../../src/profile/index.js';
import { handWindow, newSpan, sampledWindow } from '../profile/fixtures.js';
import { decodeRequest, encodeResponse } from '../profile/otlp-schema.js';
import { freePort, Receiver, until } from './receiver.js';

const FAST_RETRY: RetryPolicy = { ...DEFAULT_RETRY, initialBackoffMs: 10, maxBackoffMs: 40, maxElapsedMs: 20_000, maxAttempts: 1000 };

function exporter(url: string, diagnostics: Diagnostics, extra: Partial<OtlpHttpExporterOptions> = {}) {
  return createOtlpHttpExporter({
    url: new URL(`${url}/v1development/profiles`),
    headers: { 'x-api-key': 'k1' },
    compression: 'gzip',
    timeoutMs: 2000,
    resource: profileResource('otlp-test'),
    retry: FAST_RETRY,
    queue: { maxItems: 8, maxBytes: 8 * 1024 * 1024 },
    diagnostics,
    ...extra,
  });
}

const quiet = (): Diagnostics => new Diagnostics(() => undefined);

void test('POSTs a gzip protobuf request to /v1development/profiles with the configured headers', async (t) => {
  const rx = await Receiver.start();
  t.after(() => rx.close());
  const ex = exporter(rx.url, quiet());
  const span = newSpan('GET /checkout');
  const w = sampledWindow([span], 30);
  assert.deepEqual(await ex.export(w), { kind: 'success' });
  await ex.shutdown(1000);
  assert.equal(rx.received.length, 1);
  const r = rx.received[0]!;
  assert.equal(r.method, 'POST');
  assert.equal(r.url.pathname, '/v1development/profiles');
  assert.equal(r.headers['content-type'], 'application/x-protobuf');
  assert.equal(r.headers['content-encoding'], 'gzip');
  assert.equal(r.headers['x-api-key'], 'k1');
  const req = decodeRequest(gunzipSync(r.body));
  const profile = req.resource_profiles[0]!.scope_profiles[0]!.profiles[0]!;
  assert.equal(profile.profile_id.toString('hex'), w.profileId);
  const ids = req.dictionary.link_table.map((l) => l.trace_id.toString('hex'));
  assert.ok(ids.includes(span.trace_id));
  assert.equal(ex.stats()['sent'], 1);
});

void test('no compression when asked', async (t) => {
  const rx = await Receiver.start();
  t.after(() => rx.close());
  const ex = exporter(rx.url, quiet(), { compression: 'none' });
  await ex.export(handWindow());
  await ex.shutdown(1000);
  assert.equal(rx.received[0]?.headers['content-encoding'], undefined);
  assert.equal(decodeRequest(rx.received[0]!.body).resource_profiles.length, 1);
});

void test('503 with Retry-After: waits as told, then delivers', async (t) => {
  const rx = await Receiver.start();
  t.after(() => rx.close());
  rx.handler = (_r, i) => (i === 0 ? { status: 503, headers: { 'retry-after': '1' } } : { status: 200 });
  const ex = exporter(rx.url, quiet());
  const started = Date.now();
  assert.equal((await ex.export(handWindow())).kind, 'success');
  // A lower bound only: a sleep never ends early (the 10 ms backoff would have).
  assert.ok(Date.now() - started >= 950, 'honoured Retry-After: 1');
  assert.equal(rx.received.length, 2);
  assert.equal(ex.stats()['retries'], 1);
  await ex.shutdown(100);
});

void test('429, 502, 504 are retried; other 5xx and 4xx are not', async (t) => {
  const rx = await Receiver.start();
  t.after(() => rx.close());
  const statuses = [429, 502, 504, 200];
  rx.handler = (_r, i) => ({ status: statuses[i] ?? 200 });
  const ex = exporter(rx.url, quiet());
  assert.equal((await ex.export(handWindow())).kind, 'success');
  assert.equal(rx.received.length, 4);
  rx.handler = () => ({ status: 500 });
  assert.equal((await ex.export(handWindow())).kind, 'failure');
  assert.equal(rx.received.length, 5, '500 not retried');
  await ex.shutdown(100);
});

void test('400 with partial success: not retried, rejection counted and reported once', async (t) => {
  const rx = await Receiver.start();
  t.after(() => rx.close());
  const body = encodeResponse({ partial_success: { rejected_profiles: 3, error_message: 'bad sample_type' } });
  rx.handler = () => ({ status: 400, headers: { 'content-type': 'application/x-protobuf' }, body });
  const warnings: string[] = [];
  const diagnostics = new Diagnostics((m) => warnings.push(m));
  const ex = exporter(rx.url, diagnostics);
  const outcome = await ex.export(handWindow());
  assert.equal(outcome.kind, 'failure');
  assert.match(outcome.kind === 'failure' ? outcome.reason : '', /HTTP 400.*bad sample_type/);
  await ex.export(handWindow());
  assert.equal(rx.received.length, 2, 'one request per window, no retries');
  assert.equal(ex.stats()['rejectedProfiles'], 6);
  assert.equal(diagnostics.counters()['export.otlp.rejected_profiles'], 6);
  assert.equal(warnings.filter((w) => w.includes('rejected 3 profile(s): bad sample_type')).length, 1);
  await ex.shutdown(100);
});

void test('200 with partial success counts the rejected profiles and is delivered', async (t) => {
  const rx = await Receiver.start();
  t.after(() => rx.close());
  const body = encodeResponse({ partial_success: { rejected_profiles: 2, error_message: 'dropped 2' } });
  rx.handler = () => ({ status: 200, body });
  const ex = exporter(rx.url, quiet());
  assert.equal((await ex.export(handWindow())).kind, 'success');
  assert.equal(ex.stats()['rejectedProfiles'], 2);
  await ex.shutdown(100);
});

void test('slow responses time out and are retried', async (t) => {
  const rx = await Receiver.start();
  t.after(() => rx.close());
  rx.handler = (_r, i) => (i < 2 ? { status: 200, delayMs: 5000 } : { status: 200 });
  const ex = exporter(rx.url, quiet(), { timeoutMs: 150 });
  assert.equal((await ex.export(handWindow())).kind, 'success');
  assert.equal(rx.received.length, 3);
  assert.equal(ex.stats()['retries'], 2);
  await ex.shutdown(100);
});

void test('connection refused for a while: bounded queue, drops counted, recovery delivers in order', async (t) => {
  const port = await freePort();
  const diagnostics = quiet();
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown): void => {
    unhandled.push(e);
  };
  process.on('unhandledRejection', onUnhandled);
  t.after(() => process.off('unhandledRejection', onUnhandled));

  const windows = Array.from({ length: 10 }, (_, i) => handWindow(1_790_000_000_000_000_000n + BigInt(i) * 60_000_000_000n));
  // A byte budget of about three windows.
  const one = gzipSync(encodeOtlpRequest(windows[0]!, { resource: profileResource('otlp-test'), scopeName: 'spanfuse', scopeVersion: spanfuseVersion() })).length;
  const limit = Math.floor(one * 3.5);
  const ex = exporter(`http://127.0.0.1:${port}`, diagnostics, { queue: { maxItems: 100, maxBytes: limit } });
  const pipeline = new ExportPipeline({ exporters: [ex], diagnostics, maxPendingWindows: 16 });
  for (const w of windows) pipeline.submit(w);
  // Let the first attempts fail against the closed port.
  await until(() => (ex.stats()['retries'] ?? 0) >= 5);
  const rx = await Receiver.start(port);
  t.after(() => rx.close());
  await pipeline.flush();

  const got = rx.received.map((r) => decodeRequest(gunzipSync(r.body)).resource_profiles[0]!.scope_profiles[0]!.profiles[0]!.profile_id.toString('hex'));
  const order = windows.map((w) => w.profileId);
  // Everything received arrived in submit order, the first window (in flight
  // while refused) included, and the newest window made it.
  assert.deepEqual(got, order.filter((id) => got.includes(id)));
  assert.equal(got[0], order[0]);
  assert.equal(got[got.length - 1], order[order.length - 1]);
  const s = ex.stats();
  assert.ok((s['dropped'] ?? 0) > 0, 'older windows were dropped');
  assert.equal((s['dropped'] ?? 0) + got.length, windows.length, 'every window delivered or counted as dropped');
  assert.ok((s['queueHighWaterBytes'] ?? 0) <= limit, `queue bytes stayed within the limit (${s['queueHighWaterBytes']} <= ${limit})`);
  assert.equal(pipeline.stats().exporters['otlp']?.failed, s['dropped']);
  assert.deepEqual(unhandled, []);
  await pipeline.shutdown(500);
});

void test('shutdown with the server down ends by its deadline and drops what is left', async (t) => {
  const keepAlive = setInterval(() => undefined, 1000);
  t.after(() => clearInterval(keepAlive));
  const port = await freePort();
  const ex = exporter(`http://127.0.0.1:${port}`, quiet());
  const outcomes = [ex.export(handWindow()), ex.export(handWindow()), ex.export(handWindow())];
  await until(() => (ex.stats()['retries'] ?? 0) >= 2);
  await ex.shutdown(100);
  await ex.shutdown(100); // idempotent
  const settled = await Promise.all(outcomes);
  assert.ok(settled.every((o) => o.kind === 'failure'));
  assert.equal(ex.stats()['dropped'], 2, 'the two waiting windows');
  assert.equal((await ex.export(handWindow())).kind, 'failure', 'refuses after shutdown');
});

void test('exports run with tracing suppressed', async (t) => {
  const cm = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(cm);
  t.after(() => {
    context.disable();
  });
  const seen: boolean[] = [];
  const onStart = (): void => {
    seen.push(isTracingSuppressed(context.active()));
  };
  subscribe('http.client.request.start', onStart);
  t.after(() => unsubscribe('http.client.request.start', onStart));
  const rx = await Receiver.start();
  t.after(() => rx.close());
  const ex = exporter(rx.url, quiet());
  await ex.export(handWindow());
  await ex.shutdown(100);
  assert.deepEqual(seen, [true]);
});
