import assert from 'node:assert/strict';
import { test } from 'node:test';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { captureFlushMoment } from '../../src/workers/flush-tail.js';

test('the flush moment of a worker carries the active span, its name and its local root, like every other sample', () => {
  const cm = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(cm);
  try {
    const tracer = new BasicTracerProvider().getTracer('flush-moment');
    const outside = captureFlushMoment();
    assert.equal(outside.spanId, undefined);
    assert.equal(outside.localRootSpanId, undefined);
    tracer.startActiveSpan('root', (root) => {
      tracer.startActiveSpan('child', (child) => {
        const m = captureFlushMoment();
        assert.equal(m.spanId, child.spanContext().spanId);
        assert.equal(m.traceId, root.spanContext().traceId);
        assert.equal(m.spanName, 'child');
        assert.equal(m.localRootSpanId, root.spanContext().spanId);
        assert.ok(m.frames.length > 0, 'the moment has the stack below spanfuse');
        child.end();
      });
      root.end();
    });
  } finally {
    context.disable();
    trace.disable();
  }
});
