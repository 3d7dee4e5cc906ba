import assert from 'node:assert/strict';
import { test } from 'node:test';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { bindToContext, captureContext, carryContext, runInCarriedContext, tracedTask } from '../../src/workers/index.js';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer('carry-test');
const manager = new AsyncLocalStorageContextManager().enable();
context.setGlobalContextManager(manager);

test('carryContext + tracedTask: the task runs in a child span of the submitting span, across a structured clone', () => {
  exporter.reset();
  const parent = tracer.startSpan('submit');
  const task = context.with(trace.setSpan(context.active(), parent), () => carryContext({ n: 2 }));
  // What postMessage would deliver.
  const delivered = structuredClone(task);
  assert.match(delivered.traceContext.traceparent ?? '', /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  let inside: string | undefined;
  const handler = tracedTask('double', (p: { n: number }) => {
    inside = trace.getSpan(context.active())?.spanContext().traceId;
    return p.n * 2;
  }, { tracer });
  assert.equal(handler(delivered), 4);
  parent.end();
  const child = exporter.getFinishedSpans().find((s) => s.name === 'double');
  assert.ok(child);
  assert.equal(child.spanContext().traceId, parent.spanContext().traceId);
  assert.equal(child.parentSpanContext?.spanId, parent.spanContext().spanId);
  assert.equal(inside, parent.spanContext().traceId);
  // A plain message (no envelope) goes to the function as is, outside a span.
  assert.equal(handler({ n: 5 }), 10);
});

test('runInCarriedContext: a rejected task marks its span as an error and the span ends', async () => {
  exporter.reset();
  await assert.rejects(runInCarriedContext({}, 'failing', () => Promise.reject(new Error('boom')), { tracer }), /boom/);
  const [span] = exporter.getFinishedSpans();
  assert.equal(span?.name, 'failing');
  assert.equal(span?.status.code, 2);
  assert.equal(span?.parentSpanContext, undefined, 'an empty carrier makes a root span');
});

test('bindToContext / captureContext: queued work runs in the context that submitted it', async () => {
  const span = tracer.startSpan('submitter');
  const queue: Array<() => string | undefined> = [];
  const seen: Array<string | undefined> = [];
  context.with(trace.setSpan(context.active(), span), () => {
    queue.push(bindToContext(() => trace.getSpan(context.active())?.spanContext().spanId));
    const run = captureContext();
    queue.push(() => run(() => trace.getSpan(context.active())?.spanContext().spanId));
    // Without a helper, the drain loop's own (empty) context applies.
    queue.push(() => trace.getSpan(context.active())?.spanContext().spanId);
  });
  await new Promise<void>((resolve) =>
    context.with(context.active(), () =>
      setImmediate(() => {
        for (const job of queue) seen.push(job());
        resolve();
      }),
    ),
  );
  span.end();
  assert.deepEqual(seen, [span.spanContext().spanId, span.spanContext().spanId, undefined]);
});
