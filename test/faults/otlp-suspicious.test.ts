// A 200 whose body is not an ExportProfilesServiceResponse (a proxy's page, a
// wrong path) is counted as suspicious, with one warning; real OTLP answers
// (empty, or a partial_success) are not.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { Diagnostics } from '../../src/core/diagnostics.js';
import { createOtlpHttpExporter, DEFAULT_RETRY } from '../../src/export/index.js';
import { profileResource } from '../../src/profile/index.js';
import { newSpan, sampledWindow } from '../profile/fixtures.js';
import { encodeResponse } from '../profile/otlp-schema.js';

async function exportTo(body: Uint8Array | string, contentType: string): Promise<{ suspicious: number; warnings: string[]; sent: number }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': contentType });
      res.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const { port } = server.address() as AddressInfo;
    const warnings: string[] = [];
    const ex = createOtlpHttpExporter({
      url: new URL(`http://127.0.0.1:${port}/v1development/profiles`),
      headers: {},
      compression: 'gzip',
      timeoutMs: 5000,
      resource: profileResource('suspicious-test'),
      retry: { ...DEFAULT_RETRY, maxAttempts: 1 },
      queue: { maxItems: 4, maxBytes: 8 * 1024 * 1024 },
      diagnostics: new Diagnostics((m) => warnings.push(m)),
    });
    for (let i = 0; i < 2; i++) assert.equal((await ex.export(sampledWindow([newSpan('GET /x')], 5))).kind, 'success');
    await ex.shutdown(1000);
    const s = ex.stats();
    return { suspicious: s['suspiciousResponses'] ?? 0, warnings, sent: s['sent'] ?? 0 };
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
}

void test('a 200 with an HTML body is counted as suspicious, with one warning', async () => {
  const r = await exportTo('<html><body>OK</body></html>', 'text/html');
  assert.equal(r.sent, 2);
  assert.equal(r.suspicious, 2);
  assert.equal(r.warnings.length, 1, JSON.stringify(r.warnings));
  assert.match(r.warnings[0] ?? '', /not an ExportProfilesServiceResponse/);
});

void test('a 200 with a JSON body is suspicious too', async () => {
  assert.equal((await exportTo('{"partialSuccess":{}}', 'application/json')).suspicious, 2);
});

void test('empty and partial-success protobuf answers are not suspicious', async () => {
  const empty = await exportTo(new Uint8Array(0), 'application/x-protobuf');
  assert.deepEqual([empty.suspicious, empty.warnings.length], [0, 0]);
  const partial = await exportTo(encodeResponse({ partial_success: { rejected_profiles: 1, error_message: 'one dropped' } }), 'application/x-protobuf');
  assert.equal(partial.suspicious, 0);
});
