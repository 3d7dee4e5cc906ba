// Settings of an exporter that is not selected never switch profiling off;
// what is in use is validated; OTEL_* values follow the OTLP exporter spec's
// leniency; empty lists are errors.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { resolveConfig } from '../../src/config/index.js';
import { ConfigError } from '../../src/core/errors.js';
import { fixture, runNode } from '../support/child.js';

const FOREIGN = {
  OTEL_EXPORTER_OTLP_ENDPOINT: 'otel-collector:4317',
  OTEL_EXPORTER_OTLP_TIMEOUT: '10s',
  OTEL_EXPORTER_OTLP_HEADERS: 'api-key',
  SPANFUSE_PYROSCOPE_URL: 'pyroscope:4040',
};

function problemsOf(fn: () => unknown): { field: string; message: string }[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return [...err.problems];
    throw err;
  }
  return [];
}

for (const [name, value] of Object.entries(FOREIGN)) {
  void test(`${name}=${value} with only the file exporter: profiling stays on, one warning names it`, () => {
    const c = resolveConfig({}, { [name]: value });
    assert.deepEqual(c.export.exporters, ['file']);
    assert.equal(c.warnings.length, 1, JSON.stringify(c.warnings));
    assert.equal(c.warnings[0]?.field, name);
    assert.match(c.warnings[0]?.message ?? '', /not selected|treated as unset/);
  });
}

void test('all four together: still on, every one listed in the warnings', () => {
  const c = resolveConfig({}, FOREIGN);
  assert.deepEqual(c.warnings.map((w) => w.field).sort(), Object.keys(FOREIGN).sort());
});

void test('a selected exporter is validated: a bad endpoint or URL is an error naming the field', () => {
  const otlp = problemsOf(() => resolveConfig({}, { SPANFUSE_EXPORTERS: 'file,otlp', OTEL_EXPORTER_OTLP_ENDPOINT: 'otel-collector:4317' }));
  assert.deepEqual(otlp.map((p) => p.field), ['OTEL_EXPORTER_OTLP_ENDPOINT']);
  assert.match(otlp[0]?.message ?? '', /http\(s\) URL/);
  const pyro = problemsOf(() => resolveConfig({}, { SPANFUSE_EXPORTERS: 'pyroscope', SPANFUSE_PYROSCOPE_URL: 'pyroscope:4040' }));
  assert.deepEqual(pyro.map((p) => p.field), ['SPANFUSE_PYROSCOPE_URL']);
  const code = problemsOf(() => resolveConfig({ export: { exporters: ['otlp'], otlp: { timeoutMs: -1 } } }, {}));
  assert.deepEqual(code.map((p) => p.field), ['export.otlp.timeoutMs']);
});

void test('OTLP spec leniency when otlp is selected: bad timeout ignored, bad header entries skipped, with a warning', () => {
  const c = resolveConfig({}, {
    SPANFUSE_EXPORTERS: 'otlp',
    OTEL_EXPORTER_OTLP_TIMEOUT: '10s',
    OTEL_EXPORTER_OTLP_HEADERS: 'api-key,x-tenant=acme,bad name=1',
    OTEL_EXPORTER_OTLP_COMPRESSION: 'zstd',
  });
  assert.equal(c.export.otlp.timeoutMs, 10_000);
  assert.deepEqual(c.export.otlp.headers, { 'x-tenant': 'acme' });
  assert.equal(c.export.otlp.compression, 'gzip');
  const fields = c.warnings.map((w) => w.field);
  assert.deepEqual(fields.sort(), ['OTEL_EXPORTER_OTLP_COMPRESSION', 'OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TIMEOUT']);
  assert.ok(c.warnings.every((w) => !w.message.includes('acme')), 'a header value leaked into a warning');
});

void test('empty lists are errors: SPANFUSE_EXPORTERS=, and SPANFUSE_FILE_FORMATS=, (and [] in code)', () => {
  for (const [env, field] of [
    [{ SPANFUSE_EXPORTERS: ',' }, 'SPANFUSE_EXPORTERS'],
    [{ SPANFUSE_FILE_FORMATS: ' , ' }, 'SPANFUSE_FILE_FORMATS'],
  ] as const) {
    const p = problemsOf(() => resolveConfig({}, env));
    assert.deepEqual(p.map((x) => x.field), [field]);
    assert.match(p[0]?.message ?? '', /empty list/);
  }
  assert.deepEqual(problemsOf(() => resolveConfig({ export: { exporters: [] } }, {})).map((p) => p.field), ['export.exporters']);
  assert.deepEqual(problemsOf(() => resolveConfig({ export: { file: { formats: [] } } }, {})).map((p) => p.field), ['export.file.formats']);
});

void test('preload with the foreign settings: the app is profiled and one warning is printed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-cfg-'));
  const r = await runNode(['--import', 'spanfuse/register', fixture('idle-app')], { ...FOREIGN, SPANFUSE_OUTPUT_DIR: dir });
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /profiling is off/);
  assert.equal(r.stderr.match(/spanfuse: ignored configuration/g)?.length, 1, r.stderr);
  for (const name of Object.keys(FOREIGN)) assert.match(r.stderr, new RegExp(name));
  assert.ok(readdirSync(dir).some((f) => f.endsWith('.pb.gz')), 'no window written');
});

void test('preload with SPANFUSE_EXPORTERS=, : one clear error and the app runs unprofiled', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-cfg-'));
  const r = await runNode(['--import', 'spanfuse/register', fixture('idle-app')], { SPANFUSE_EXPORTERS: ',', SPANFUSE_OUTPUT_DIR: dir });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /SPANFUSE_EXPORTERS: empty list/);
  assert.match(r.stderr, /profiling is off/);
});
