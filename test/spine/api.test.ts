import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { trace } from '@opentelemetry/api';
import { ConfigError, current, start } from '../../src/index.js';
import { resolveConfig } from '../../src/config/index.js';
import { readPprof, wallFiles } from '../support/pprof.js';

test('config: code beats env beats default; every problem is listed once', () => {
  const c = resolveConfig({ windowMs: 2000 }, { SPANFUSE_WINDOW_MS: '5000', SPANFUSE_SAMPLING_INTERVAL_US: '2000', OTEL_SERVICE_NAME: 'svc' });
  assert.equal(c.windowMs, 2000);
  assert.equal(c.samplingIntervalMicros, 2000);
  assert.equal(c.serviceName, 'svc');
  assert.equal(c.outputDir, './spanfuse-out');
  const d = resolveConfig({}, {});
  assert.equal(d.windowMs, 10_000);
  assert.equal(d.samplingIntervalMicros, 10_000);
  assert.equal(d.serviceName, 'unknown_service:node');
  assert.equal(resolveConfig({}, { OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-res,team=a%20b' }).serviceName, 'from-res');
  assert.equal(resolveConfig({}, { OTEL_RESOURCE_ATTRIBUTES: 'team=a%20b' }).resourceAttributes['team'], 'a b');

  assert.throws(
    () => resolveConfig({ windowMs: 0.5, outputDir: '' }, { SPANFUSE_SAMPLING_INTERVAL_US: 'x', OTEL_RESOURCE_ATTRIBUTES: 'novalue' }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.code, 'SPANFUSE_INVALID_CONFIG');
      const fields = err.problems.map((p) => p.field).sort();
      assert.deepEqual(fields, ['SPANFUSE_SAMPLING_INTERVAL_US', 'outputDir', 'windowMs']);
      return true;
    },
  );
  // An undecodable OTEL_RESOURCE_ATTRIBUTES is dropped whole with a warning, as the OTel SDK does; profiling goes on.
  const lenient = resolveConfig({}, { OTEL_RESOURCE_ATTRIBUTES: 'team=a,novalue' });
  assert.equal(lenient.resourceAttributes['team'], undefined);
  assert.ok(lenient.warnings.some((w) => w.field === 'OTEL_RESOURCE_ATTRIBUTES' && /ignored/.test(w.message)), JSON.stringify(lenient.warnings));
  // Node's recursive mkdir never returns under /proc: refused up front.
  assert.throws(
    () => resolveConfig({}, { SPANFUSE_OUTPUT_DIR: '/proc/spanfuse-out' }),
    (err: unknown) => err instanceof ConfigError && err.problems.some((p) => p.field === 'outputDir' && /under \/proc/.test(p.message)),
  );
  // Falsy values are expressible.
  assert.equal(resolveConfig({ collectCpuTime: false }, { SPANFUSE_CPU_TIME: 'true' }).collectCpuTime, false);
});

test('start(): flush writes a window; shutdown is idempotent; start twice returns the same instance', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-api-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const sf = start({ outputDir: dir, samplingIntervalMicros: 1000, windowMs: 60_000 });
  assert.ok(sf);
  assert.equal(current(), sf);
  assert.equal(start({ outputDir: dir }), sf);
  assert.match(sf.currentProfileId, /^[0-9a-f]{32}$/);

  const firstId = sf.currentProfileId;
  trace.getTracer('api-test').startActiveSpan('api-span', (span) => {
    const end = Date.now() + 100;
    while (Date.now() < end);
    span.end();
  });
  await sf.flush();
  assert.notEqual(sf.currentProfileId, firstId, 'flush must open a new window');
  const files = wallFiles(dir);
  assert.equal(files.length, 1);
  assert.ok(files[0]!.includes(firstId), 'the file is named by the window profile id');
  const p = readPprof(files[0]!);
  assert.deepEqual(p.sampleTypes, ['sample', 'wall', 'cpu']);
  assert.ok(p.samples.some((s) => typeof s.labels['span_id'] === 'string' && s.labels['span_name'] === 'api-span'));
  assert.ok(p.samples.every((s) => typeof s.labels['thread.id'] === 'string' && s.labels['thread.name'] === 'main'));

  const stats = sf.stats();
  assert.equal(stats.running, true);
  assert.equal(stats.windows.collected, 1);
  assert.ok(stats.windows.labelledSamples > 0 && stats.windows.labelledSamples <= stats.windows.samples);

  const a = sf.shutdown();
  const b = sf.shutdown();
  await Promise.all([a, b]);
  await sf.shutdown();
  assert.equal(sf.stats().running, false);
  assert.equal(current(), undefined);
  assert.equal(wallFiles(dir).length, 2, 'shutdown writes the last partial window');
});
