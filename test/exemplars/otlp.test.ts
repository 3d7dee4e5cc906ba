import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { BasicTracerProvider, BatchSpanProcessor, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import protobuf from 'protobufjs';
import { TailSpanProcessor, tailSettings } from '../../src/exemplars/index.js';
import { fakeWindow, msToHr } from './helpers.js';

// The part of opentelemetry-proto trace v1 this test reads, written from the
// field numbers (ExportTraceServiceRequest > ResourceSpans > ScopeSpans > Span).
const SCHEMA = `
syntax = "proto3";
message Req { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { repeated ScopeSpans scope_spans = 2; }
message ScopeSpans { repeated Span spans = 2; }
message Span { bytes trace_id = 1; bytes span_id = 2; string name = 5; repeated KeyValue attributes = 9; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue {
  oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; ArrayValue array_value = 5; }
}
message ArrayValue { repeated AnyValue values = 1; }
`;
const Req = protobuf.parse(SCHEMA, { keepCase: true }).root.lookupType('Req');

interface DecodedSpan {
  spanId: string;
  name: string;
  attrs: Map<string, unknown>;
}

function decode(body: Buffer): DecodedSpan[] {
  const msg = Req.toObject(Req.decode(body), { longs: Number, bytes: String }) as {
    resource_spans?: { scope_spans?: { spans?: { span_id: string; name: string; attributes?: { key: string; value: Record<string, unknown> }[] }[] }[] }[];
  };
  const out: DecodedSpan[] = [];
  for (const rs of msg.resource_spans ?? [])
    for (const ss of rs.scope_spans ?? [])
      for (const s of ss.spans ?? []) {
        const attrs = new Map<string, unknown>();
        for (const kv of s.attributes ?? []) attrs.set(kv.key, anyValue(kv.value));
        out.push({ spanId: Buffer.from(s.span_id, 'base64').toString('hex'), name: s.name, attrs });
      }
  return out;
}

function anyValue(v: Record<string, unknown>): unknown {
  if ('array_value' in v) return ((v.array_value as { values?: Record<string, unknown>[] }).values ?? []).map(anyValue);
  for (const k of ['string_value', 'bool_value', 'int_value', 'double_value']) if (k in v) return v[k];
  return undefined;
}

async function receiver() {
  const bodies: Buffer[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      bodies.push(req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw);
      res.writeHead(200, { 'content-type': 'application/x-protobuf' });
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1/traces`, bodies, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const ID = 'c'.repeat(32);
const T0 = 1_700_000_000_000;

for (const kind of ['simple', 'batch'] as const) {
  void test(`real OTLP/proto exporter (${kind} processor) to a loopback receiver: tail attributes and figures arrive`, async () => {
    const rx = await receiver();
    try {
      const exporter = new OTLPTraceExporter({ url: rx.url });
      const downstream: SpanProcessor = kind === 'simple' ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(exporter);
      const tail = new TailSpanProcessor({
        downstream,
        settings: tailSettings({ rule: { quantile: undefined, quantileLabel: undefined, budgetMs: 50 } }),
        windowMs: 1000,
        currentProfileId: () => ID,
      });
      const provider = new BasicTracerProvider({ spanProcessors: [tail] });
      const tracer = provider.getTracer('otlp-test');
      const slow = tracer.startSpan('slow', { startTime: msToHr(T0) });
      slow.end(msToHr(T0 + 120));
      const fast = tracer.startSpan('fast', { startTime: msToHr(T0) });
      fast.end(msToHr(T0 + 3));
      const slowId = slow.spanContext().spanId;
      const w = fakeWindow(ID, BigInt(T0) * 1_000_000n, BigInt(T0 + 1000) * 1_000_000n, [
        { spanId: slowId, rootId: slowId, fn: 'hot', file: 'h.js', line: 3, wallNs: 1_000_000, cpuNs: 900_000 },
        { spanId: slowId, rootId: slowId, fn: 'hot', file: 'h.js', line: 3, wallNs: 1_000_000, cpuNs: 1_100_000 },
      ]);
      tail.onWindowClosed(w);
      await provider.forceFlush();
      await provider.shutdown();
      const spans = rx.bodies.flatMap(decode);
      assert.equal(spans.length, 2);
      const s = spans.find((x) => x.spanId === slowId);
      assert.ok(s, 'tail span received');
      assert.equal(s.attrs.get('profiler.tail'), true);
      assert.equal(s.attrs.get('profiler.tail.quantile'), 'budget');
      assert.equal(s.attrs.get('profiler.tail.threshold_ms'), 50);
      assert.equal(s.attrs.get('profiler.exemplar.id'), ID);
      assert.equal(s.attrs.get('pyroscope.profile.id'), slowId);
      assert.equal(s.attrs.get('profiler.cpu.time_ns'), 2_000_000);
      assert.equal(s.attrs.get('profiler.wall.time_ns'), 2_000_000);
      assert.equal(s.attrs.get('profiler.offcpu.time_ns'), 118_000_000);
      assert.equal(s.attrs.get('profiler.samples'), 2);
      assert.deepEqual(s.attrs.get('profiler.top_frames'), ['hot (h.js:3) 100%']);
      assert.equal(s.attrs.get('profiler.subtree.cpu.time_ns'), 2_000_000);
      assert.equal(s.attrs.get('profiler.exemplar.status'), 'complete');
      const f = spans.find((x) => x.name === 'fast');
      assert.ok(f);
      assert.equal(f.attrs.get('profiler.tail'), undefined);
    } finally {
      await rx.close();
    }
  });
}
