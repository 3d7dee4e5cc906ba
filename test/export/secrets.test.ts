// 50+ planted secrets (span names, label values, paths, URL queries,
// profile attributes, tail spans) must appear in no byte stream that any
// exporter produces: files, OTLP bodies, Pyroscope bodies, queries, headers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Diagnostics } from '../../src/core/diagnostics.js';
import { Problems } from '../../src/config/env.js';
import { resolveExportConfig } from '../../src/config/export.js';
import { createExporters, createScrubber, ExportPipeline } from '../../src/export/index.js';
import { handProfile, makeWindow, newSpan } from '../profile/fixtures.js';
import type { HandFrame, HandSample } from '../profile/fixtures.js';
import { parseMultipart } from './multipart-parse.js';
import { Receiver } from './receiver.js';

const ROOT = '/home/alice/projects/shop';

/** [secret, where it is planted]. The secret text must never be exported. */
const SECRETS: [string, string][] = [];
const plant = (secret: string, where: string): string => {
  SECRETS.push([secret, where]);
  return secret;
};

// Span names (label span_name).
const spanNames = [
  `GET /login?password=${plant('hunter2secret', 'span name query')}`,
  `POST /reset?token=${plant('5f4dcc3b5aa765d61d8327deb882cf99', 'span name query hex')}`,
  `GET /users?email=${plant('alice.smith@example.com', 'span name query email')}`,
  `charge ${plant('4111 1111 1111 1111', 'span name card')}`,
  `auth Bearer ${plant('sk9XkLm2Qp7RtVw3Yz8AbCdEf', 'span name bearer')}`,
  `verify ${plant('eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U', 'span name jwt')}`,
  `mail to ${plant('carol@corp.example.net', 'span name email')}`,
  `pay ${plant('5500-0000-0000-0004', 'span name card dashes')}`,
  `amex ${plant('378282246310005', 'span name amex')}`,
  `sync key ${plant('AKIAIOSFODNN7EXAMPLE', 'span name aws key id')}`,
];

// Label values under sensitive keys and in free text.
const labels: Record<string, string> = {
  password: plant('correct-horse-battery-staple', 'password label'),
  DB_PASSWORD: plant('Tr0ub4dor&3', 'DB_PASSWORD label'),
  authorization: `Basic ${plant('dXNlcjpwYXNzd29yZA==', 'authorization label')}`,
  cookie: `sessionid=${plant('38afes7a8q', 'cookie label')}`,
  'session.id': plant('sess-a1b2c3d4e5f6', 'session.id label'),
  api_key: plant('ak_live_2b9f8c7d6e5a4b3c', 'api_key label'),
  apiKey: plant('my-api-key-value-007', 'apiKey label'),
  'x-api-key': plant('xak-8a7s6d5f', 'x-api-key label'),
  secret: plant('the-cake-is-a-lie', 'secret label'),
  private_key: `-----BEGIN RSA PRIVATE KEY-----${plant('MIIEowIBAAKCAQEA7bq', 'private_key label')}-----END RSA PRIVATE KEY-----`,
  credential: plant('cred-99-xyz', 'credential label'),
  'user.pin': plant('4321-pin', 'custom deny key label'),
  'user.email': plant('bob@corp.example.org', 'email label'),
  'http.url': `https://api.example.com/v1/items?api_key=${plant('QWERTY12345', 'url query api_key')}&sig=${plant('abcdef0987', 'url query sig')}`,
  'db.statement': `SELECT * FROM users WHERE password = '${plant('p@ssw0rd!', 'sql password')}'`,
  'db.url': `postgres://admin:${plant('S3cr3tPa55', 'url credentials')}@db.internal:5432/app`,
  note: `contact ${plant('dave@example.io', 'free text email')}`,
  'github.token.used': plant('ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789', 'github token'),
  'slack.hook': plant('xoxb-123456789012-abcdefghijklmnop', 'slack token'),
  'stripe.ref': plant('sk_live_51H8abcdefghijklmnopqrstu', 'stripe key'),
  'google.ref': plant('AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW', 'google key'),
  'signing.digest': plant('9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08', 'hex 64'),
  'blob.ref': plant('q8Zx2LmP4vN7wR1tY6uK3jH9gF5dS0aQ', 'base64 32'),
  'cache.key': plant('dGhpcyBpcyBhIHNlY3JldCBrZXkgdmFsdWU=', 'base64 text'),
  'http.target': `/callback?code=${plant('authcode-7788', 'query code')}&state=${plant('st-5566', 'query state')}`,
  'ws.url': `wss://push.example.com/socket?access_token=${plant('wsTok-4455', 'wss query')}`,
  'order.code': plant('ACME-123456', 'user rule'),
  'card.visa': plant('4012888888881881', 'card in label'),
  'auth.header': `Bearer ${plant('eyJraWQiOiIxIn0.eyJzY29wZSI6InJlYWQifQ.c2lnbmF0dXJlMTIzNA', 'bearer jwt')}`,
  'form.body': `user=x&passwd=${plant('pa55wd-form', 'form passwd')}`,
};

// Function names and file paths.
const frames: HandFrame[] = [
  { name: 'checkout', file: `${ROOT}/src/pay.js`, line: 10 },
  { name: 'load', file: `/home/alice/.nvm/versions/node/v20/lib/cache/token=${plant('pathTok-9911', 'token in a path')}/x.js`, line: 1 },
  { name: 'esm', file: `file://${ROOT}/src/esm.mjs?v=${plant('secretversion123', 'file url query')}`, line: 3 },
  { name: 'mac', file: `/Users/${plant('bob.jones', 'mac home user')}/work/app.js`, line: 4 },
  { name: 'win', file: `C:\\Users\\${plant('dave.w', 'windows home user')}\\app\\index.js`, line: 5 },
  { name: 'opt', file: `/opt/alice/bin/node-tool.js`, line: 6 },
  { name: `handler_${plant('sk_test_4eC39HqLyjWDarjtT1zdp7dc', 'function name stripe test key')}`, file: `${ROOT}/src/h.js`, line: 7 },
];
// The home directory and user name are secrets too.
plant('/home/alice', 'home directory');
plant('alice', 'user name');
plant('/Users/', 'mac home prefix');
plant('C:\\Users\\dave', 'windows home');

const attributes = {
  'deploy.token': plant('dtok-abc-998877', 'profile attribute token'),
  'build.url': `https://ci.example.com/job?access_token=${plant('zzz999ci', 'profile attribute url query')}`,
  mode: 'async-hooks',
};
const tailOperation = `GET /reset?token=${plant('tail-secret-777', 'tail span operation')} (SERVER)`;

function corpusWindow() {
  const start = 1_790_000_000_000_000_000n;
  const thread = { 'thread.id': '77', 'thread.name': 'main' };
  const spans = spanNames.map((n) => newSpan(n));
  const samples: HandSample[] = [];
  spans.forEach((span, i) => {
    samples.push({
      stack: [frames[i % frames.length]!, frames[0]!],
      values: [1, 1_000_000, 500_000],
      labels: { ...span, ...thread, end_timestamp_ns: start + BigInt(i + 1) * 1_000_000n },
    });
  });
  Object.entries(labels).forEach(([k, v], i) => {
    samples.push({
      stack: [frames[(i + 1) % frames.length]!],
      values: [1, 1_000_000, 0],
      labels: { ...spans[0]!, ...thread, [k]: v, end_timestamp_ns: start + BigInt(i + 20) * 1_000_000n },
    });
  });
  const types: [string, string][] = [
    ['sample', 'count'],
    ['wall', 'nanoseconds'],
    ['cpu', 'nanoseconds'],
  ];
  const w = makeWindow(handProfile(types, samples), start, start + 1_000_000_000n, {
    attributes,
    tailSpans: [{ spanId: spans[0]!.span_id, traceId: spans[0]!.trace_id, operation: tailOperation, quantile: 'p99', thresholdMs: 1, durationMs: 2 }],
  });
  w.heap = handProfile([['space', 'bytes']], [{ stack: [frames[1]!, frames[3]!], values: [4096], labels: { 'http.url': labels['http.url']!, password: labels['password']! } }]);
  return { w, spans };
}

void test("planted secrets: none reaches any exporter's bytes", async (t) => {
  assert.ok(SECRETS.length >= 50, `corpus has ${SECRETS.length} secrets`);
  const otlp = await Receiver.start();
  const pyro = await Receiver.start();
  const dir = await mkdtemp(join(tmpdir(), 'spanfuse-secrets-'));
  t.after(async () => {
    await otlp.close();
    await pyro.close();
    await rm(dir, { recursive: true, force: true });
  });
  const problems = new Problems();
  const config = resolveExportConfig(
    {
      exporters: ['file', 'otlp', 'pyroscope'],
      file: { formats: ['pprof', 'otlp'] },
      otlp: { endpoint: otlp.url, headers: { 'x-tenant': 'shop' } },
      pyroscope: { url: pyro.url, tags: { env: 'test' } },
      scrub: { appRoot: ROOT, denyKeys: ['pin'], rules: ['ACME-\\d{6}'] },
    },
    {},
    problems,
  );
  assert.deepEqual(problems.list, []);
  // The machine's user is not alice: add her as the name to hide.
  const scrubConfig = { ...config, scrub: { ...config.scrub, userNames: [...config.scrub.userNames, 'alice'] } };
  const diagnostics = new Diagnostics(() => undefined);
  const exporters = createExporters(scrubConfig, { outputDir: dir, resource: { 'deployment.environment': 'test' }, serviceName: 'shop', diagnostics });
  const pipeline = new ExportPipeline({ exporters, scrubber: createScrubber(scrubConfig), diagnostics });
  const { w, spans } = corpusWindow();
  pipeline.submit(w);
  await pipeline.flush();
  const stats = pipeline.stats();
  for (const name of ['file', 'otlp', 'pyroscope']) assert.equal(stats.exporters[name]?.succeeded, 1, `${name} delivered`);

  // Every byte stream, decompressed.
  const streams: [string, Buffer][] = [];
  for (const f of await readdir(dir)) {
    const b = await readFile(join(dir, f));
    streams.push([`file ${f}`, f.endsWith('.gz') ? gunzipSync(b) : b]);
    streams.push([`file name ${f}`, Buffer.from(f)]);
  }
  assert.equal(streams.length, 6, 'wall + heap pprof and the otlp file');
  for (const r of otlp.received) {
    streams.push(['otlp body', gunzipSync(r.body)]);
    streams.push(['otlp request line and headers', Buffer.from(`${r.url.href} ${JSON.stringify(r.headers)}`)]);
  }
  for (const r of pyro.received) {
    streams.push(['pyroscope raw body', r.body]);
    for (const part of parseMultipart(r.body, r.headers['content-type'] ?? '')) streams.push(['pyroscope pprof', gunzipSync(part.body)]);
    streams.push(['pyroscope query and headers', Buffer.from(`${decodeURIComponent(r.url.href)} ${JSON.stringify(r.headers)}`)]);
  }
  assert.equal(otlp.received.length, 1);
  assert.equal(pyro.received.length, 2);
  // The otlp file and the OTLP exporter share one encoding of the window: the same request.
  const otlpFile = streams.find(([name]) => name.startsWith('file ') && !name.startsWith('file name') && name.includes('.otlp'));
  assert.ok(otlpFile !== undefined, 'an otlp file');
  assert.deepEqual(otlpFile[1], gunzipSync(otlp.received[0]!.body), 'the otlp file is the request the exporter sent');

  const leaks: string[] = [];
  for (const [secret, where] of SECRETS) {
    for (const [name, bytes] of streams) {
      if (bytes.includes(Buffer.from(secret))) leaks.push(`${where} (${JSON.stringify(secret)}) in ${name}`);
    }
  }
  assert.deepEqual(leaks, []);

  // What must survive did: ids, routes, relative paths, values.
  const otlpBody = streams.find(([n]) => n === 'otlp body')![1];
  for (const s of spans) {
    assert.ok(otlpBody.includes(Buffer.from(s.trace_id, 'hex')), 'trace id in the link table');
  }
  const pprofText = streams.find(([n]) => n.startsWith('file spanfuse') && n.endsWith('Z-' + w.profileId + '.pb.gz'))?.[1] ?? Buffer.alloc(0);
  for (const s of spans) assert.ok(pprofText.includes(Buffer.from(s.span_id)), 'span_id label survives in pprof');
  assert.ok(pprofText.includes(Buffer.from('src/pay.js')));
  assert.ok(pprofText.includes(Buffer.from('GET /login')));
  assert.ok((stats.scrub['redactions'] ?? 0) >= 50, `redactions counted (${stats.scrub['redactions']})`);
  await pipeline.shutdown(500);
});
