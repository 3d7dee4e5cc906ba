// spanfuse's own provider (tracing/sdk.ts) with the real SDK: created at the
// first getTracer(), with the resource and processors it was given; and when
// the SDK cannot be loaded, a no-op tracer and one warning instead of an
// exception in the app's code.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { DeferredTracerProvider, requireSdk } from '../../src/tracing/sdk.js';

test('the SDK provider is made at the first getTracer(), with the given resource and processors', async () => {
  let loads = 0;
  const exporter = new InMemorySpanExporter();
  const provider = new DeferredTracerProvider({ 'service.name': 'deferred-svc' }, [new SimpleSpanProcessor(exporter)], () => {
    loads++;
    return requireSdk();
  });
  assert.equal(loads, 0);
  const span = provider.getTracer('t').startSpan('one');
  span.end();
  provider.getTracer('u').startSpan('two').end();
  assert.equal(loads, 1);
  const ended = exporter.getFinishedSpans();
  assert.deepEqual(ended.map((s) => s.name), ['one', 'two']);
  assert.equal(ended[0]!.resource.attributes['service.name'], 'deferred-svc');
  assert.equal(span.spanContext().traceFlags, 1);
  await provider.shutdown();
});

test('an SDK that cannot be loaded gives no-op tracers and one warning, not an exception', async () => {
  let loads = 0;
  const provider = new DeferredTracerProvider({}, [], () => {
    loads++;
    throw new Error("Cannot find module '@opentelemetry/sdk-trace-base'");
  });
  const warned = once(process, 'warning');
  const span = provider.getTracer('t').startSpan('lost');
  span.end();
  const [warning] = (await warned) as [Error & { code?: string }];
  assert.equal(warning.code, 'SPANFUSE_SDK_UNAVAILABLE');
  assert.match(warning.message, /Cannot find module/);
  assert.equal(span.isRecording(), false);
  assert.equal(span.spanContext().traceFlags, 0);
  // Not tried again at every call.
  provider.getTracer('u').startSpan('lost-too').end();
  assert.equal(loads, 1);
  // load() itself still says why (the main thread's start() reports it).
  assert.throws(() => provider.load(), /Cannot find module/);
  await provider.shutdown();
});
