import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import protobuf from 'protobufjs';
import type { SpanContext } from '@opentelemetry/api';
import { Diagnostics } from '../../src/core/diagnostics.js';
import { Problems } from '../../src/config/env.js';
import { parseRuntimeConfig } from '../../src/config/runtime.js';
import { RuntimeSignals, ThreadContextPublisher, OTEL_CTX_VERSION } from '../../src/runtime/index.js';
import { loadLibc } from '../../src/runtime/ffi.js';

const require = createRequire(import.meta.url);
const acf = require('@datadog/pprof/out/src/async-context-frame.js') as { isAsyncContextFrameActive(): boolean };
const acfActive = process.platform === 'linux' && acf.isAsyncContextFrameActive();
const threadCtx = require('@datadog/pprof/out/src/otel-thread-ctx.js') as { _currentRecordBytes(): Uint8Array | undefined };

// An independent decoder for the payload, from a schema written for this
// test (opentelemetry-proto v1.11.0 field numbers).
const root = protobuf.Root.fromJSON({
  nested: {
    AnyValue: {
      fields: {
        stringValue: { type: 'string', id: 1 },
        boolValue: { type: 'bool', id: 2 },
        intValue: { type: 'int64', id: 3 },
        doubleValue: { type: 'double', id: 4 },
        arrayValue: { type: 'ArrayValue', id: 5 },
      },
    },
    ArrayValue: { fields: { values: { rule: 'repeated', type: 'AnyValue', id: 1 } } },
    KeyValue: { fields: { key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } } },
    Resource: { fields: { attributes: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
    ProcessContext: {
      fields: { resource: { type: 'Resource', id: 1 }, attributes: { rule: 'repeated', type: 'KeyValue', id: 2 } },
    },
  },
});
const ProcessContext = root.lookupType('ProcessContext');

interface Kv {
  key: string;
  value: { stringValue?: string; intValue?: unknown; boolValue?: boolean; arrayValue?: { values: { stringValue?: string }[] } };
}

function readMem(addr: bigint, n: number): Buffer {
  const fd = openSync('/proc/self/mem', 'r');
  try {
    const b = Buffer.alloc(n);
    assert.equal(readSync(fd, b, 0, n, addr), n);
    return b;
  } finally {
    closeSync(fd);
  }
}

const span: SpanContext = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 };

test('OTEL_CTX mapping is in /proc/self/maps with a valid header and a ProcessContext payload', { skip: !loadLibc().ok }, async () => {
  const rs = new RuntimeSignals(parseRuntimeConfig({}, new Problems(), { threadState: false, threadContext: true }), new Diagnostics(() => undefined));
  await rs.start({ resource: { 'service.name': 'ctx-test', 'service.instance.id': 'abc-123', 'process.pid': process.pid } });
  try {
    const res = rs.processContextResult();
    assert.ok(res?.ok, rs.stats().processContext);
    assert.equal(rs.stats().processContext, res.kind);
    const line = readFileSync('/proc/self/maps', 'utf8')
      .split('\n')
      .find((l) => /\/memfd:OTEL_CTX|\[anon(_shmem)?:OTEL_CTX\]/.test(l));
    assert.ok(line, 'mapping listed in /proc/self/maps');
    const start = BigInt(`0x${line.split('-')[0]}`);
    assert.equal(start, res.address);
    const header = readMem(start, 32);
    assert.equal(header.toString('latin1', 0, 8), 'OTEL_CTX');
    assert.equal(header.readUInt32LE(8), OTEL_CTX_VERSION);
    const size = header.readUInt32LE(12);
    const publishedAt = header.readBigUInt64LE(16);
    const payloadPtr = header.readBigUInt64LE(24);
    assert.ok(size > 0);
    assert.ok(publishedAt > 0n);
    const payload = readMem(payloadPtr, size);
    const decoded = ProcessContext.toObject(ProcessContext.decode(payload), { longs: Number }) as {
      resource: { attributes: Kv[] };
      attributes?: Kv[];
    };
    const resource = new Map(decoded.resource.attributes.map((kv) => [kv.key, kv.value]));
    assert.equal(resource.get('service.name')?.stringValue, 'ctx-test');
    assert.equal(resource.get('service.instance.id')?.stringValue, 'abc-123');
    assert.equal(resource.get('process.pid')?.intValue, process.pid);
    const attrs = new Map((decoded.attributes ?? []).map((kv) => [kv.key, kv.value]));
    if (acfActive) {
      assert.equal(attrs.get('threadlocal.schema_version')?.stringValue, 'nodejs_v1_dev');
      assert.deepEqual(
        attrs.get('threadlocal.attribute_key_map')?.arrayValue?.values.map((v) => v.stringValue),
        ['span_name', 'local_root_span_id'],
      );
    } else {
      assert.equal(attrs.has('threadlocal.schema_version'), false, 'no key map where no thread context is published');
    }
    // An update keeps the mapping and changes the timestamp.
    assert.ok(rs.updateProcessContext({ 'service.name': 'ctx-test-2' }).ok);
    const after = readMem(start, 32);
    assert.notEqual(after.readBigUInt64LE(16), publishedAt);
    const again = ProcessContext.toObject(ProcessContext.decode(readMem(after.readBigUInt64LE(24), after.readUInt32LE(12)))) as {
      resource: { attributes: Kv[] };
    };
    assert.equal(again.resource.attributes[0]?.value.stringValue, 'ctx-test-2');
  } finally {
    await rs.stop();
  }
});

test('thread context record of an active span holds its trace and span ids (AsyncContextFrame)', { skip: !acfActive && 'no AsyncContextFrame' }, async () => {
  const pub = new ThreadContextPublisher();
  assert.equal(pub.supported, true, pub.reason);
  const traceId = Buffer.from(span.traceId, 'hex');
  const spanId = Buffer.from(span.spanId, 'hex');
  const seen = await pub.run(
    span,
    async () => {
      await new Promise((r) => setTimeout(r, 5));
      // After an await, the continuation still carries the record.
      return threadCtx._currentRecordBytes();
    },
    'GET /users/:id',
    '00f067aa0ba902b7',
  );
  assert.ok(seen, 'a record is active inside run()');
  const bytes = Buffer.from(seen);
  assert.deepEqual(bytes.subarray(0, 16), traceId);
  assert.deepEqual(bytes.subarray(16, 24), spanId);
  assert.equal(bytes[24], 1, 'valid');
  assert.equal(bytes[25], 1, 'trace flags');
  assert.ok(bytes.includes(Buffer.from('GET /users/:id')));
  // Cached per span: the same object every time.
  assert.equal(pub.contextFor(span), pub.contextFor(span));
  const ctx = pub.contextFor(span);
  assert.ok(ctx);
  pub.end(span);
  assert.equal(ctx.debugBytes()[24], 0, 'invalid after the span ended');
  assert.equal(threadCtx._currentRecordBytes(), undefined, 'nothing active outside run()');
});

test('without AsyncContextFrame the thread context reports unsupported and run() still runs', { skip: acfActive && 'AsyncContextFrame active' }, async () => {
  const pub = new ThreadContextPublisher();
  assert.equal(pub.supported, false);
  assert.ok(pub.reason && pub.reason.length > 0);
  if (process.platform === 'linux') assert.match(pub.reason, /AsyncContextFrame/);
  assert.equal(pub.run(span, () => 42), 42);
  assert.equal(pub.contextFor(span), undefined);
  assert.equal(pub.processContextAttributes(), undefined);
  const warnings: string[] = [];
  const rs = new RuntimeSignals(parseRuntimeConfig({}, new Problems(), { threadState: false, threadContext: true }), new Diagnostics((m) => warnings.push(m)));
  await rs.start();
  await rs.stop();
  assert.match(rs.stats().threadContext, /AsyncContextFrame|Linux-only/);
  assert.equal(warnings.filter((w) => w.includes('thread context')).length, 1, 'said once');
});
