import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Problems } from '../../src/config/env.js';
import { resolveExportConfig } from '../../src/config/export.js';
import type { ExportOptions } from '../../src/config/export.js';
import { Diagnostics } from '../../src/core/diagnostics.js';
import { createExporters, FileExporter } from '../../src/export/index.js';

function resolve(options: ExportOptions | undefined, env: Record<string, string> = {}) {
  const problems = new Problems();
  const config = resolveExportConfig(options, env, problems);
  return { config, problems: problems.list };
}

void test('defaults: files only, OTLP at localhost:4318 with the profiles path, gzip, 10 s', () => {
  const { config, problems } = resolve(undefined);
  assert.deepEqual(problems, []);
  assert.deepEqual(config.exporters, ['file']);
  assert.deepEqual(config.file.formats, ['pprof']);
  assert.equal(config.otlp.url.href, 'http://localhost:4318/v1development/profiles');
  assert.equal(config.otlp.compression, 'gzip');
  assert.equal(config.otlp.timeoutMs, 10_000);
  assert.equal(config.pyroscope.url.href, 'http://localhost:4040/');
  assert.deepEqual(config.pyroscope.auth, { kind: 'none' });
  assert.equal(config.scrub.appRoot, process.cwd());
});

void test('OTLP endpoint env: the generic one gets the path, the PROFILES one is used as is; code wins', () => {
  assert.equal(resolve(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' }).config.otlp.url.href, 'http://c:4318/v1development/profiles');
  assert.equal(resolve(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://c/otlp' }).config.otlp.url.href, 'https://c/otlp/v1development/profiles');
  assert.equal(
    resolve(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:1', OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT: 'http://b:2/custom' }).config.otlp.url.href,
    'http://b:2/custom',
  );
  assert.equal(resolve({ otlp: { endpoint: 'http://code:9' } }, { OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT: 'http://b:2/x' }).config.otlp.url.href, 'http://code:9/v1development/profiles');
  assert.equal(resolve({ otlp: { url: 'http://code:9/p' } }).config.otlp.url.href, 'http://code:9/p');
});

void test('headers merge generic < PROFILES < code; timeout and compression: PROFILES over generic', () => {
  const { config, problems } = resolve(
    { otlp: { headers: { c: '3' } } },
    {
      OTEL_EXPORTER_OTLP_HEADERS: 'a=1,b=1',
      OTEL_EXPORTER_OTLP_PROFILES_HEADERS: 'b=2,auth=Bearer%20x',
      OTEL_EXPORTER_OTLP_TIMEOUT: '5000',
      OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT: '7000',
      OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
      OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION: 'none',
    },
  );
  assert.deepEqual(problems, []);
  assert.deepEqual(config.otlp.headers, { a: '1', b: '2', auth: 'Bearer x', c: '3' });
  assert.equal(config.otlp.timeoutMs, 7000);
  assert.equal(config.otlp.compression, 'none');
  assert.equal(resolve(undefined, { OTEL_EXPORTER_OTLP_TIMEOUT: '5000' }).config.otlp.timeoutMs, 5000);
});

void test('SPANFUSE_EXPORTERS selects exporters; code wins; duplicates collapse', () => {
  assert.deepEqual(resolve(undefined, { SPANFUSE_EXPORTERS: 'file, OTLP,otlp,pyroscope' }).config.exporters, ['file', 'otlp', 'pyroscope']);
  assert.deepEqual(resolve({ exporters: ['otlp'] }, { SPANFUSE_EXPORTERS: 'file' }).config.exporters, ['otlp']);
  assert.deepEqual(resolve(undefined, { SPANFUSE_FILE_FORMATS: 'pprof,otlp' }).config.file.formats, ['pprof', 'otlp']);
});

void test('Pyroscope from env: URL, app name, tags, bearer or basic auth, tenant', () => {
  const { config, problems } = resolve(undefined, {
    SPANFUSE_PYROSCOPE_URL: 'https://pyro.example.com/prefix',
    SPANFUSE_PYROSCOPE_APP_NAME: 'shop',
    SPANFUSE_PYROSCOPE_TAGS: 'env=prod,region=eu',
    SPANFUSE_PYROSCOPE_BASIC_AUTH_USER: '123',
    SPANFUSE_PYROSCOPE_BASIC_AUTH_PASSWORD: 'glc_x',
    SPANFUSE_PYROSCOPE_TENANT_ID: 't1',
  });
  assert.deepEqual(problems, []);
  assert.equal(config.pyroscope.url.href, 'https://pyro.example.com/prefix');
  assert.equal(config.pyroscope.appName, 'shop');
  assert.deepEqual(config.pyroscope.tags, { env: 'prod', region: 'eu' });
  assert.deepEqual(config.pyroscope.auth, { kind: 'basic', user: '123', password: 'glc_x' });
  assert.equal(config.pyroscope.tenantId, 't1');
  assert.deepEqual(resolve({ pyroscope: { authToken: 'tk' } }).config.pyroscope.auth, { kind: 'bearer', token: 'tk' });
});

void test('bad input gives one clear problem per field, naming the fix, and never throws', () => {
  const { problems } = resolve(
    {
      exporters: ['file', 'otlp', 'pyroscope', 'jaeger' as 'file'],
      otlp: { url: 'localhost:4318', headers: { 'bad header': 'x', ok: 'line\nbreak' }, timeoutMs: -1, compression: 'zstd' as 'gzip' },
      pyroscope: { url: 'ftp://p', authToken: 't', basicAuthUser: 'u' },
      scrub: { rules: ['(unclosed'] },
      queue: { maxBytes: 1.5 },
    },
    { SPANFUSE_EXPORTERS: 'nope', OTEL_EXPORTER_OTLP_HEADERS: 'novalue', OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL: 'grpc' },
  );
  const fields = problems.map((p) => p.field);
  for (const f of [
    'export.exporters',
    'export.otlp.url',
    'export.otlp.headers',
    'export.otlp.timeoutMs',
    'export.otlp.compression',
    'export.pyroscope.url',
    'export.pyroscope.authToken',
    'export.scrub.rules[0]',
    'export.queue.maxBytes',
    'OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL',
  ]) {
    assert.ok(fields.includes(f), `problem for ${f}: ${JSON.stringify(problems)}`);
  }
  const byField = Object.fromEntries(problems.map((p) => [p.field, p.message]));
  assert.match(byField['export.exporters'] ?? '', /unknown name "jaeger"; use one or more of file, otlp, pyroscope/);
  assert.match(byField['export.otlp.url'] ?? '', /expected an http\(s\) URL such as http:\/\/localhost:4318/);
  assert.ok(!fields.includes('SPANFUSE_EXPORTERS'), 'code wins over env, env not validated twice');
  assert.match(resolve(undefined, { SPANFUSE_EXPORTERS: 'file,otel' }).problems[0]?.message ?? '', /unknown name "otel"/);
  assert.match(resolve({ exporters: ['otlp'] }, { OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' }).problems[0]?.field ?? '', /OTEL_EXPORTER_OTLP_ENDPOINT/);
  assert.doesNotThrow(() => resolveExportConfig({ file: 7, otlp: null } as unknown as ExportOptions, {}, new Problems()));
});

void test('createExporters builds the selected exporters in order', () => {
  const { config } = resolve({ exporters: ['otlp', 'file', 'pyroscope'] });
  const exporters = createExporters(config, {
    outputDir: '/tmp/spanfuse-never-written',
    resource: {},
    serviceName: 'svc',
    diagnostics: new Diagnostics(() => undefined),
  });
  assert.deepEqual(exporters.map((e) => e.name), ['otlp', 'file', 'pyroscope']);
  assert.ok(exporters[1] instanceof FileExporter);
  for (const e of exporters) void e.shutdown(0);
});
