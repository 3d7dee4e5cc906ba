import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { Diagnostics } from '../../src/core/diagnostics.js';
import { keepsTrace, JsonlSpanProcessor, SPANS_FILE } from '../../src/tracing/jsonl-processor.js';
import { readSpans } from '../../src/debug/index.js';
import { runNode } from '../support/child.js';

const tmp = (): string => mkdtempSync(join(tmpdir(), 'spanfuse-spansfile-'));

function lines(dir: string): Array<Record<string, unknown>> {
  return readFileSync(join(dir, SPANS_FILE), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

test('keepsTrace: one trace id in N, the same answer for every span of a trace', () => {
  const ids = Array.from({ length: 20_000 }, (_, i) => (BigInt(i) * 0x9e3779b97f4a7c15n).toString(16).padStart(32, '0').slice(-32));
  const kept = ids.filter((id) => keepsTrace(id, 10)).length;
  // Binomial(20000, 0.1): mean 2000, sd 42.
  assert.ok(kept > 1800 && kept < 2200, `${kept} of 20000 kept at one in 10`);
  assert.equal(ids.filter((id) => keepsTrace(id, 1)).length, ids.length);
  for (const id of ids.slice(0, 100)) assert.equal(keepsTrace(id, 7), keepsTrace(id, 7));
  assert.equal(keepsTrace('not hex', 10), false, 'an id that is not hex is not kept');
});

test('the writer keeps every tail span and one trace in N of the others, each with its adjustedCount; oneIn 1 keeps all', async () => {
  for (const oneIn of [10, 1]) {
    const dir = tmp();
    try {
      const writer = new JsonlSpanProcessor({ dir, maxFileBytes: 1 << 30, oneIn, diagnostics: new Diagnostics() });
      const tracer = new BasicTracerProvider({ spanProcessors: [writer] }).getTracer('t');
      let tails = 0;
      for (let i = 0; i < 2000; i++) {
        const span = tracer.startSpan(i % 50 === 0 ? 'slow' : 'fast');
        if (i % 50 === 0) {
          span.setAttribute('profiler.tail', true);
          tails++;
        }
        span.end();
      }
      await writer.shutdown();
      const got = lines(dir);
      const tailLines = got.filter((l) => (l.attributes as Record<string, unknown>)['profiler.tail'] === true);
      const normal = got.filter((l) => (l.attributes as Record<string, unknown>)['profiler.tail'] !== true);
      assert.equal(tailLines.length, tails, 'every tail span is written');
      for (const l of tailLines) assert.equal(l.adjustedCount, undefined, 'a tail span stands for itself');
      if (oneIn === 1) {
        assert.equal(got.length, 2000);
        for (const l of got) assert.equal(l.adjustedCount, undefined);
      } else {
        // 1960 normal spans, each its own trace: Binomial(1960, 0.1), mean 196, sd 13.
        assert.ok(normal.length > 130 && normal.length < 270, `${normal.length} of 1960 normal spans kept at one in 10`);
        for (const l of normal) {
          assert.equal(l.adjustedCount, 10);
          assert.ok(keepsTrace(String(l.traceId), 10));
        }
        assert.equal(writer.stats().sampledOut, 1960 - normal.length);
        // The tools count a line as the spans it stands for.
        const counted = readSpans(dir).reduce((a, s) => a + s.adjustedCount, 0);
        assert.equal(counted, tails + 10 * normal.length);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});

test('kept spans become lines at the end of the turn they ended in, not when a batch has gathered', async () => {
  const dir = tmp();
  try {
    const writer = new JsonlSpanProcessor({ dir, maxFileBytes: 1 << 30, oneIn: 1, diagnostics: new Diagnostics(), flushIntervalMs: 60_000 });
    const tracer = new BasicTracerProvider({ spanProcessors: [writer] }).getTracer('t');
    for (let i = 0; i < 3; i++) tracer.startSpan(`s${i}`).end();
    // Still this turn: the three spans are only referenced.
    assert.equal(writer.stats().bufferedBytes, 0);
    await new Promise<void>((resolve) => setImmediate(resolve));
    // The turn has ended: their lines are built (and wait for the write), well short of a batch.
    const buffered = writer.stats().bufferedBytes;
    assert.ok(buffered > 0, 'lines built at the end of the turn');
    // Spans ending in a later turn make lines of their own.
    tracer.startSpan('s3').end();
    await new Promise<void>((resolve) => setImmediate(resolve));
    assert.ok(writer.stats().bufferedBytes > buffered);
    await writer.shutdown();
    assert.deepEqual(
      lines(dir).map((l) => l.name),
      ['s0', 's1', 's2', 's3'],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('beyond its byte bound the writer drops the oldest batches of lines, counts them, and writes the rest whole', async () => {
  const dir = tmp();
  try {
    // 16 KiB: a few batches of ~200-byte lines; nothing is written before shutdown.
    const writer = new JsonlSpanProcessor({ dir, maxFileBytes: 1 << 30, maxBufferBytes: 16 * 1024, flushIntervalMs: 60_000, diagnostics: new Diagnostics() });
    const tracer = new BasicTracerProvider({ spanProcessors: [writer] }).getTracer('t');
    for (let i = 0; i < 1000; i++) {
      const span = tracer.startSpan(`op-${String(i).padStart(4, '0')}`);
      span.setAttribute('note', 'é'.repeat(40)); // multi-byte text: the bound is in bytes
      span.end();
    }
    const buffered = writer.stats().bufferedBytes;
    assert.ok(buffered > 0 && buffered <= 16 * 1024 + 32 * 400, `buffered ${buffered} bytes`);
    await writer.shutdown();
    const got = lines(dir);
    const { written, dropped } = writer.stats();
    assert.equal(written, got.length);
    assert.ok(dropped > 0, 'some batches were dropped');
    assert.equal(written + dropped, 1000, 'every span is either written or counted as dropped');
    // The newest spans are the ones kept, in order.
    const names = got.map((l) => String(l.name));
    assert.equal(names.at(-1), 'op-0999');
    assert.deepEqual(names, [...names].sort());
    for (const l of got) assert.equal((l.attributes as Record<string, unknown>).note, 'é'.repeat(40));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// An app at defaults (no SPANFUSE_SPANS_ONE_IN): 600 one-span traces, every
// 20th slower than the 8 ms budget (a tail span), the others quick.
const APP = `
import { trace } from '@opentelemetry/api';
const tracer = trace.getTracer('spans-file');
for (let i = 0; i < 600; i++) {
  tracer.startActiveSpan(i % 20 === 0 ? 'slow-op' : 'quick-op', (span) => {
    const end = Date.now() + (i % 20 === 0 ? 12 : 0);
    while (Date.now() < end);
    span.end();
  });
  if (i % 50 === 0) await new Promise((r) => setImmediate(r));
}
`;

test('at defaults, through the preload, spans.jsonl keeps every tail span and about one in 10 of the rest', async () => {
  const dir = tmp();
  try {
    const r = await runNode(['--import', 'spanfuse/register', '--input-type=module', '-e', APP], {
      SPANFUSE_OUTPUT_DIR: dir,
      SPANFUSE_SPANS_ONE_IN: '',
      SPANFUSE_TAIL_THRESHOLD_MS: '8',
    });
    assert.equal(r.code, 0, r.stderr);
    const got = lines(dir);
    const slow = got.filter((l) => l.name === 'slow-op');
    // A quick span that a loaded machine made slower than the budget is a tail span too.
    const quick = got.filter((l) => l.name === 'quick-op' && (l.attributes as Record<string, unknown>)['profiler.tail'] !== true);
    assert.equal(slow.length, 30, `${slow.length} of 30 slow spans in spans.jsonl`);
    for (const l of slow) assert.equal((l.attributes as Record<string, unknown>)['profiler.tail'], true);
    // 570 quick spans, each its own trace: Binomial(570, 0.1), mean 57, sd 7.
    assert.ok(quick.length > 25 && quick.length < 100, `${quick.length} of 570 quick spans kept`);
    assert.ok(got.length < 200, `${got.length} lines: spans out of the tail were not thinned`);
    for (const l of quick) assert.equal(l.adjustedCount, 10);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
