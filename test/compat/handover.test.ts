// The delegate spanfuse gives the API's proxy provider, with the real
// @opentelemetry/api ProxyTracerProvider and SDK providers: tracers handed
// out before the app registers its provider follow it; the fusion monitor
// tells spans that passed spanfuse's processor from those that did not.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ProxyTracerProvider } from '@opentelemetry/api';
import type { Span } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Diagnostics } from '../../src/core/diagnostics.js';
import { armAutoInstrumentation, FusionMonitor, HandoverTracerProvider } from '../../src/tracing/index.js';

function sdk(): { provider: BasicTracerProvider; exporter: InMemorySpanExporter } {
  const exporter = new InMemorySpanExporter();
  return { provider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }), exporter };
}

test('tracers obtained while spanfuse serves forward every span start to the provider that replaces it', () => {
  const proxy = new ProxyTracerProvider();
  const own = sdk();
  let handovers = 0;
  const delegate = new HandoverTracerProvider(own.provider, proxy, () => handovers++);
  proxy.setDelegate(delegate);

  // An instrumentation asks early, as NodeSDK's registerInstrumentations() does.
  const early = proxy.getTracer('instrumentation-x', '1.0.0');
  early.startSpan('before').end();
  assert.deepEqual(own.exporter.getFinishedSpans().map((s) => s.name), ['before']);
  assert.equal(delegate.handedOver, false);

  const app = sdk();
  proxy.setDelegate(app.provider); // what trace.setGlobalTracerProvider(app) does
  early.startSpan('after').end();
  const active = early.startActiveSpan('active', (s: Span) => {
    s.end();
    return 42;
  });
  early.startActiveSpan('with-options', { attributes: { a: 1 } }, (s: Span) => s.end());
  assert.equal(active, 42);
  assert.deepEqual(app.exporter.getFinishedSpans().map((s) => s.name), ['after', 'active', 'with-options']);
  assert.deepEqual(app.exporter.getFinishedSpans()[2]?.attributes, { a: 1 });
  assert.equal(app.exporter.getFinishedSpans()[0]?.instrumentationScope.name, 'instrumentation-x');
  assert.deepEqual(own.exporter.getFinishedSpans().map((s) => s.name), ['before'], 'spanfuse kept nothing after the handover');
  assert.equal(delegate.handedOver, true);
  assert.equal(handovers, 1);

  // A second replacement (e.g. the app re-registers) is followed too.
  const again = sdk();
  proxy.setDelegate(again.provider);
  early.startSpan('third').end();
  assert.deepEqual(again.exporter.getFinishedSpans().map((s) => s.name), ['third']);
});

test("quiet tracers (spanfuse's own opt-in instrumentation) produce no spans once the app's provider serves", () => {
  const proxy = new ProxyTracerProvider();
  const own = sdk();
  const delegate = new HandoverTracerProvider(own.provider, proxy);
  proxy.setDelegate(delegate);
  const quiet = delegate.quietAfterHandover().getTracer('spanfuse-http');
  quiet.startSpan('ours').end();
  const app = sdk();
  proxy.setDelegate(app.provider);
  const s = quiet.startSpan('not-recorded');
  assert.equal(s.isRecording(), false);
  s.end();
  assert.deepEqual(own.exporter.getFinishedSpans().map((x) => x.name), ['ours']);
  assert.deepEqual(app.exporter.getFinishedSpans(), []);
});

test('fusion: a recording span that never passed spanfuse processor is reported once, with the fix', () => {
  const warnings: string[] = [];
  const monitor = new FusionMonitor(new Diagnostics((m) => warnings.push(m)), []);
  const fused = new BasicTracerProvider({ spanProcessors: [monitor.noteProcessor(true)] });
  const plain = new BasicTracerProvider();

  const a = fused.getTracer('t').startSpan('fused');
  monitor.check(a);
  assert.equal(monitor.stats('app').state, 'fused');
  assert.equal(warnings.length, 0);

  const b = plain.getTracer('t').startSpan('unfused');
  monitor.check(b);
  monitor.check(plain.getTracer('t').startSpan('again'));
  const st = monitor.stats('app');
  assert.equal(st.state, 'unfused');
  assert.equal(st.unfusedSpansSeen, 1, 'the watch stops at the verdict');
  assert.equal(warnings.length, 1);
  assert.match(warnings[0] ?? '', /spanProcessor\(new BatchSpanProcessor\(exporter\)\)/);
  assert.equal(monitor.watching, false);
});

test('fusion: non-recording spans (remote parents, unsampled) give no verdict; zero-code start gets its own advice', () => {
  const warnings: string[] = [];
  const monitor = new FusionMonitor(new Diagnostics((m) => warnings.push(m)), ['--require', '@opentelemetry/auto-instrumentations-node/register']);
  const plain = new BasicTracerProvider();
  const ended = plain.getTracer('t').startSpan('ended');
  ended.end();
  monitor.check(ended);
  assert.equal(monitor.stats('app').state, 'pending');
  monitor.providerRegisteredBefore();
  assert.equal(monitor.stats('app').state, 'unfused');
  assert.equal(monitor.stats('spanfuse').state, 'spanfuse-provider');
  assert.equal(warnings.length, 1);
  assert.match(warnings[0] ?? '', /zero-code start .* no way to add a span processor/);
});

test('fusion: the watch rests after a run of fused spans and wakes on rearm (a handover)', () => {
  const warnings: string[] = [];
  const monitor = new FusionMonitor(new Diagnostics((m) => warnings.push(m)), []);
  const fused = new BasicTracerProvider({ spanProcessors: [monitor.noteProcessor(true)] });
  for (let i = 0; i < 1000; i++) monitor.check(fused.getTracer('t').startSpan(`s${i}`));
  assert.equal(monitor.watching, false);
  monitor.rearm();
  assert.equal(monitor.watching, true);
  monitor.check(new BasicTracerProvider().getTracer('t').startSpan('foreign'));
  assert.equal(monitor.stats('app').state, 'unfused');
  assert.equal(warnings.length, 1);
});

test('SPANFUSE_AUTO_INSTRUMENT=http without @opentelemetry/instrumentation-http: one notice, nothing armed', () => {
  const warnings: string[] = [];
  const diag = new Diagnostics((m) => warnings.push(m));
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-noinst-'));
  const nowhere = join(dir, 'package.json');
  const provider = new BasicTracerProvider();
  const opts = { provider, spanfuseServes: () => true, diag, bases: [nowhere] };
  const first = armAutoInstrumentation('http', opts);
  const second = armAutoInstrumentation('http', opts);
  assert.equal(first.state(), 'none');
  assert.equal(second.state(), 'none');
  assert.equal(warnings.length, 1);
  assert.match(warnings[0] ?? '', /npm install @opentelemetry\/instrumentation-http/);
  rmSync(dir, { recursive: true, force: true });
});

test('SPANFUSE_AUTO_INSTRUMENT=http with an app provider at startup: one notice, nothing armed', () => {
  const warnings: string[] = [];
  const auto = armAutoInstrumentation('http', { provider: undefined, spanfuseServes: () => false, diag: new Diagnostics((m) => warnings.push(m)) });
  assert.equal(auto.state(), 'none');
  assert.match(warnings[0] ?? '', /is ignored: the app registered its own tracer provider/);
});
