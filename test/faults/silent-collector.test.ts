// An OTLP collector that accepts the connection and never answers must not
// keep a finished process alive for the request timeout: a natural exit is
// bounded by the shutdown deadline (5 s), not the request timeout (60 s here), and the file window is still written.
import assert from 'node:assert/strict';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { checkWindows, faultFixture, startNode, tmp } from './helpers.js';

void test('a silent collector does not delay a natural exit past the shutdown deadline', async () => {
  const sockets = new Set<Socket>();
  let bytes = 0;
  const server = createServer((s) => {
    sockets.add(s);
    s.on('data', (d: Buffer) => (bytes += d.length));
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const { port } = server.address() as AddressInfo;
    const dir = tmp();
    const r = await startNode(
      ['--import', 'spanfuse/register', faultFixture('short-app')],
      {
        SPANFUSE_OUTPUT_DIR: dir,
        SPANFUSE_WINDOW_MS: '500',
        SPANFUSE_EXPORTERS: 'file,otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
        OTEL_EXPORTER_OTLP_TIMEOUT: '60000',
        FAULT_WORK_MS: '1200',
      },
      120_000,
    ).done;
    assert.equal(r.signal, null, r.stderr);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(bytes > 0, 'the collector never received a request: nothing was in flight');
    // 1.2 s of work + the 5 s shutdown deadline + start-up on a loaded
    // machine, well below the 60 s request timeout that held it before.
    assert.ok(r.ms < 30_000, `exit took ${r.ms} ms`);
    const files = checkWindows(dir);
    assert.deepEqual(files.broken, []);
    assert.ok(files.byId.size >= 2, `windows on disk: ${files.byId.size}`);
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

void test('a responsive collector still gets every window, the last one included, at a natural exit', async () => {
  let posts = 0;
  const server = createHttpServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1development/profiles') posts++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' });
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const { port } = server.address() as AddressInfo;
    const dir = tmp();
    const r = await startNode(['--import', 'spanfuse/register', faultFixture('short-app')], {
      SPANFUSE_OUTPUT_DIR: dir,
      SPANFUSE_WINDOW_MS: '500',
      SPANFUSE_EXPORTERS: 'file,otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      FAULT_WORK_MS: '1200',
    }).done;
    assert.equal(r.code, 0, r.stderr);
    const windows = checkWindows(dir).byId.size;
    assert.ok(windows >= 2, `windows on disk: ${windows}`);
    // Unref'd sockets must not cut the last export short: one request per window.
    assert.equal(posts, windows);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});
