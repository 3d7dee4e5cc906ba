import { test } from 'node:test';
import assert from 'node:assert/strict';
import { context, trace } from '@opentelemetry/api';
import type { Attributes } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import type { ExportResult } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { SamplingDecision } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan, Sampler, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ThreadCounterReader, ThreadWindowCounters, currentTid } from '../../src/runtime/index.js';
import { FileExporter } from '../../src/export/index.js';
import type { SpanCounterSource } from '../../src/core/counters.js';
import { Diagnostics } from '../../src/core/diagnostics.js';
import { TailSpanProcessor, tailSettings } from '../../src/exemplars/index.js';
import type { TailSettings } from '../../src/exemplars/index.js';
import { fakeWindow, msToHr } from './helpers.js';

const ID_A = 'a'.repeat(32);
const ID_B = 'b'.repeat(32);
const T0 = 1_700_000_000_000; // ms since epoch
const BUDGET_50: Partial<TailSettings> = { rule: { quantile: undefined, quantileLabel: undefined, budgetMs: 50 } };

/** Collects what reaches it; survives shutdown (InMemorySpanExporter clears itself). */
class CollectingExporter implements SpanExporter {
  readonly spans: ReadableSpan[] = [];
  export(spans: ReadableSpan[], done: (r: ExportResult) => void): void {
    this.spans.push(...spans);
    done({ code: ExportResultCode.SUCCESS });
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

function setup(settings: Partial<TailSettings>, opts: { downstream?: SpanProcessor; counters?: SpanCounterSource } = {}) {
  const exporter = new InMemorySpanExporter();
  const state = { profileId: ID_A, pending: [] as string[] };
  const pins: string[] = [];
  const warnings: string[] = [];
  const tail = new TailSpanProcessor({
    downstream: opts.downstream ?? new SimpleSpanProcessor(exporter),
    settings: tailSettings(settings),
    windowMs: 1000,
    currentProfileId: () => state.profileId,
    pendingProfileIds: () => state.pending,
    retention: { pin: (id) => pins.push(`pin ${id}`), unpin: (id) => pins.push(`unpin ${id}`) },
    diagnostics: new Diagnostics((m) => warnings.push(m)),
    ...(opts.counters !== undefined ? { counters: opts.counters } : {}),
  });
  const provider = new BasicTracerProvider({ spanProcessors: [tail] });
  const tracer = provider.getTracer('test');
  /** A span with exact times: start at `startMs` after T0, lasting `durationMs`. */
  const span = (name: string, startMs: number, durationMs: number, parent?: ReturnType<typeof tracer.startSpan>) => {
    const ctxParent = parent === undefined ? undefined : parent.spanContext();
    const s = tracer.startSpan(
      name,
      { startTime: msToHr(T0 + startMs) },
      ctxParent === undefined ? undefined : trace.setSpanContext(context.active(), ctxParent),
    );
    return { s, end: () => s.end(msToHr(T0 + startMs + durationMs)), id: s.spanContext().spanId };
  };
  return { exporter, state, pins, warnings, tail, provider, span };
}


function attrs(spans: readonly ReadableSpan[], spanId: string): Attributes {
  const s = spans.find((x) => x.spanContext().spanId === spanId);
  assert.ok(s !== undefined, `span ${spanId} exported`);
  return s.attributes;
}

const ns = (ms: number) => Math.round(ms * 1e6);

void test('fast spans pass at once; a tail span waits for its window, then carries its own and its subtree figures', () => {
  const { exporter, pins, tail, span } = setup(BUDGET_50);
  const fast = span('fast', 0, 10);
  fast.end();
  assert.equal(exporter.getFinishedSpans().length, 1, 'non-tail span forwarded immediately');
  assert.equal(exporter.getFinishedSpans()[0]!.attributes['profiler.tail'], undefined);

  const root = span('slow', 100, 100);
  const child = span('child', 120, 20, root.s);
  child.end();
  root.end();
  assert.equal(exporter.getFinishedSpans().length, 2, 'the child passed, the tail root is held');
  assert.deepEqual(pins, [`pin ${ID_A}`]);

  const w = fakeWindow(ID_A, BigInt(T0) * 1_000_000n, BigInt(T0 + 1000) * 1_000_000n, [
    ...Array.from({ length: 3 }, () => ({ spanId: root.id, rootId: root.id, fn: 'burn', file: '/srv/app/lib/work.js', line: 12, wallNs: ns(1), cpuNs: ns(1) })),
    { spanId: root.id, rootId: root.id, fn: 'Garbage Collection', wallNs: ns(1), cpuNs: ns(1) },
    { spanId: root.id, rootId: root.id, fn: 'wait', file: 'w.js', wallNs: ns(1), cpuNs: ns(0.1) },
    { spanId: child.id, rootId: root.id, fn: 'child', file: 'c.js', wallNs: ns(1), cpuNs: ns(1) },
    { spanId: child.id, rootId: root.id, fn: 'child', file: 'c.js', wallNs: ns(1), cpuNs: ns(1) },
    { spanId: fast.id, rootId: fast.id, fn: 'other', wallNs: ns(1), cpuNs: ns(1) },
    { fn: '(idle)', wallNs: 0, cpuNs: 0 },
  ]);
  const result = tail.onWindowClosed(w);
  assert.equal(result.released, 1);
  assert.equal(result.tailSpans, 1);
  assert.deepEqual(result.pendingProfileIds, []);
  assert.deepEqual(pins, [`pin ${ID_A}`, `unpin ${ID_A}`]);
  assert.equal(w.tailSpans.length, 1);
  assert.deepEqual({ ...w.tailSpans[0] }, {
    spanId: root.id,
    traceId: root.s.spanContext().traceId,
    operation: 'slow (INTERNAL)',
    quantile: 'budget',
    thresholdMs: 50,
    durationMs: 100,
  });

  const a = attrs(exporter.getFinishedSpans(), root.id);
  assert.equal(exporter.getFinishedSpans().length, 3);
  assert.equal(a['profiler.tail'], true);
  assert.equal(a['profiler.tail.quantile'], 'budget');
  assert.equal(a['profiler.tail.threshold_ms'], 50);
  assert.equal(a['profiler.exemplar.id'], ID_A);
  assert.equal(a['pyroscope.profile.id'], root.id);
  assert.equal(a['profiler.exemplar.status'], 'complete');
  assert.equal(a['profiler.samples'], 5);
  assert.equal(a['profiler.cpu.time_ns'], ns(4.1));
  assert.equal(a['profiler.wall.time_ns'], ns(5));
  assert.equal(a['profiler.gc.time_ns'], ns(1));
  assert.equal(a['profiler.offcpu.time_ns'], ns(100) - ns(4.1));
  assert.deepEqual(a['profiler.top_frames'], ['burn (work.js:12) 60%', 'Garbage Collection 20%', 'wait (w.js) 20%']);
  assert.equal(a['profiler.subtree.samples'], 7);
  assert.equal(a['profiler.subtree.cpu.time_ns'], ns(6.1));
  assert.equal(a['profiler.subtree.offcpu.time_ns'], ns(100) - ns(6.1));
  assert.equal(attrs(exporter.getFinishedSpans(), child.id)['profiler.subtree.samples'], undefined, 'subtree figures only on local roots');
});

void test('a span whose samples straddle the previous window gets both; one older than the kept windows is partial', () => {
  const { exporter, state, tail, span } = setup(BUDGET_50);
  const early = span('early', 0, 2500); // starts before window A
  const straddle = span('straddle', 1500, 1000); // starts in A, ends in B
  // Window A: [1000, 2000) ms after T0.
  const wA = fakeWindow(ID_A, BigInt(T0 + 1000) * 1_000_000n, BigInt(T0 + 2000) * 1_000_000n, [
    { spanId: straddle.id, fn: 'a', wallNs: ns(1), cpuNs: ns(2) },
    { spanId: early.id, fn: 'a', wallNs: ns(1), cpuNs: ns(1) },
  ]);
  tail.onWindowClosed(wA);
  state.profileId = ID_B;
  straddle.end();
  early.end();
  assert.equal(exporter.getFinishedSpans().length, 0);
  const wB = fakeWindow(ID_B, BigInt(T0 + 2000) * 1_000_000n, BigInt(T0 + 3000) * 1_000_000n, [
    { spanId: straddle.id, fn: 'b', wallNs: ns(1), cpuNs: ns(3) },
  ]);
  const r = tail.onWindowClosed(wB);
  assert.equal(r.released, 2);
  const s = attrs(exporter.getFinishedSpans(), straddle.id);
  assert.equal(s['profiler.samples'], 2);
  assert.equal(s['profiler.cpu.time_ns'], ns(5));
  assert.equal(s['profiler.exemplar.id'], ID_B);
  assert.equal(s['profiler.exemplar.status'], 'complete');
  const e = attrs(exporter.getFinishedSpans(), early.id);
  assert.equal(e['profiler.exemplar.status'], 'partial');
  assert.equal(e['profiler.samples'], 1);
});

void test('windows queued for their build keep their held spans: each gets its figures from its own window', () => {
  const ID_C = 'c'.repeat(32);
  const { exporter, state, tail, span } = setup(BUDGET_50);
  const inA = span('in-a', 100, 200);
  inA.end();
  state.profileId = ID_B; // A closed; B open
  const inB = span('in-b', 1100, 200);
  inB.end();
  // B closes too before A's build reaches the tail stage (a starved loop): B waits in the queue, C is open.
  state.profileId = ID_C;
  state.pending = [ID_A, ID_B];
  const wA = fakeWindow(ID_A, BigInt(T0) * 1_000_000n, BigInt(T0 + 1000) * 1_000_000n, [{ spanId: inA.id, fn: 'a', wallNs: ns(1), cpuNs: ns(1) }]);
  assert.equal(tail.onWindowClosed(wA).released, 1);
  assert.deepEqual(
    exporter.getFinishedSpans().map((x) => x.name),
    ['in-a'],
    "B's span waits for B",
  );
  state.pending = [ID_B];
  const wB = fakeWindow(ID_B, BigInt(T0 + 1000) * 1_000_000n, BigInt(T0 + 2000) * 1_000_000n, [
    { spanId: inB.id, fn: 'b', wallNs: ns(1), cpuNs: ns(2) },
    { spanId: inB.id, fn: 'b', wallNs: ns(1), cpuNs: ns(2) },
  ]);
  assert.equal(tail.onWindowClosed(wB).released, 1);
  const b = attrs(exporter.getFinishedSpans(), inB.id);
  assert.equal(b['profiler.exemplar.status'], 'complete');
  assert.equal(b['profiler.samples'], 2);
  assert.equal(attrs(exporter.getFinishedSpans(), inA.id)['profiler.exemplar.status'], 'complete');
});

void test('a burst of tail spans larger than the hold: the rest forwarded unenriched and counted, nothing thrown', async () => {
  const { exporter, tail, span, warnings } = setup({ ...BUDGET_50, holdMaxSpans: 16 });
  for (let i = 0; i < 200; i++) span(`burst-${i % 7}`, i, 60).end();
  const st = tail.stats();
  assert.equal(st.tailSpans, 200);
  assert.equal(st.held, 16);
  assert.equal(st.holdFull, 184);
  const now = exporter.getFinishedSpans();
  assert.equal(now.length, 184);
  for (const s of now) {
    assert.equal(s.attributes['profiler.exemplar.status'], 'hold_full');
    assert.equal(s.attributes['profiler.tail'], true);
  }
  await tail.forceFlush();
  const all = exporter.getFinishedSpans();
  assert.equal(all.length, 200);
  assert.equal(all.filter((s) => s.attributes['profiler.exemplar.status'] === 'flush').length, 16);
  assert.deepEqual(warnings, []);
});

void test('a held span whose window never closes is released after the hold delay', async () => {
  const { exporter, pins, tail, span } = setup({ ...BUDGET_50, holdMaxDelayMs: 20 });
  const s = span('slow', 0, 80);
  s.end();
  assert.equal(exporter.getFinishedSpans().length, 0);
  await until(() => exporter.getFinishedSpans().length === 1);
  assert.equal(attrs(exporter.getFinishedSpans(), s.id)['profiler.exemplar.status'], 'timeout');
  assert.equal(tail.stats().releasedTimeout, 1);
  assert.deepEqual(pins, [`pin ${ID_A}`, `unpin ${ID_A}`]);
});

void test('no open window: the tail span is marked and forwarded at once without an exemplar id', () => {
  const { exporter, state, span } = setup(BUDGET_50);
  state.profileId = '';
  const s = span('slow', 0, 80);
  s.end();
  const a = attrs(exporter.getFinishedSpans(), s.id);
  assert.equal(a['profiler.tail'], true);
  assert.equal(a['profiler.exemplar.id'], undefined);
  assert.equal(a['profiler.exemplar.status'], 'no_profile');
});

void test('with BatchSpanProcessor: enriched spans are exported on flush; shutdown releases what is held and shuts downstream', async () => {
  const exporter = new CollectingExporter();
  const { tail, span, provider } = setup(BUDGET_50, { downstream: new BatchSpanProcessor(exporter, { scheduledDelayMillis: 60_000 }) });
  const a = span('slow', 0, 80);
  a.end();
  span('fast', 0, 5).end();
  tail.onWindowClosed(fakeWindow(ID_A, BigInt(T0) * 1_000_000n, BigInt(T0 + 1000) * 1_000_000n, [{ spanId: a.id, fn: 'f', wallNs: ns(1), cpuNs: ns(1) }]));
  await provider.forceFlush();
  assert.equal(exporter.spans.length, 2);
  assert.equal(attrs(exporter.spans, a.id)['profiler.cpu.time_ns'], ns(1));
  const b = span('slow', 0, 90);
  b.end();
  await provider.shutdown();
  assert.equal(attrs(exporter.spans, b.id)['profiler.exemplar.status'], 'shutdown');
  await provider.shutdown(); // idempotent
});

void test('window counters from a SpanCounterSource land on tail spans only', () => {
  let begun = 0;
  let ended = 0;
  const counters: SpanCounterSource = {
    begin: () => {
      begun++;
      return process.resourceUsage().voluntaryContextSwitches;
    },
    end: (token) => {
      ended++;
      return { 'profiler.ctx_switches.voluntary': process.resourceUsage().voluntaryContextSwitches - (token as number) };
    },
  };
  const { exporter, span, tail } = setup(BUDGET_50, { counters });
  const slow = span('slow', 0, 80);
  const fast = span('fast', 0, 5);
  fast.end();
  slow.end();
  tail.onWindowClosed(fakeWindow(ID_A, BigInt(T0) * 1_000_000n, BigInt(T0 + 1000) * 1_000_000n, []));
  assert.equal(begun, 2);
  assert.equal(ended, 1, 'end() only for the tail span');
  assert.equal(typeof attrs(exporter.getFinishedSpans(), slow.id)['profiler.ctx_switches.voluntary'], 'number');
  assert.equal(attrs(exporter.getFinishedSpans(), fast.id)['profiler.ctx_switches.voluntary'], undefined);
  // Window closed with no sample of the span: zero samples is what was measured.
  assert.equal(attrs(exporter.getFinishedSpans(), slow.id)['profiler.samples'], 0);
});

void test('a failing counter source or window is counted, never thrown', () => {
  const warnings: string[] = [];
  const counters: SpanCounterSource = {
    begin: () => {
      throw new Error('no counters here');
    },
    end: () => ({}),
  };
  const exporter = new InMemorySpanExporter();
  const tail = new TailSpanProcessor({
    downstream: new SimpleSpanProcessor(exporter),
    windowMs: 1000,
    counters,
    diagnostics: new Diagnostics((m) => warnings.push(m)),
  });
  const provider = new BasicTracerProvider({ spanProcessors: [tail] });
  provider.getTracer('t').startSpan('x').end();
  provider.getTracer('t').startSpan('x').end();
  const broken = fakeWindow(ID_A, 0n, 1n, []);
  (broken as { wall: unknown }).wall = { stringTable: null };
  tail.onWindowClosed(broken);
  assert.equal(exporter.getFinishedSpans().length, 2);
  assert.equal(tail.stats().errors, 3);
  assert.equal(warnings.length, 2, 'one warning per kind');
});

async function until(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

void test('with the runtime stage\'s ThreadWindowCounters: tail spans carry the thread\'s counters over the span', () => {
  const counters = new ThreadWindowCounters({ tid: currentTid(), threadCounters: new ThreadCounterReader() });
  const { exporter, span, tail } = setup(BUDGET_50, { counters });
  const slow = span('slow', 0, 80);
  // Real work between start and end so the thread's counters move.
  for (let i = 0; i < 50; i++) readFileSync(fileURLToPath(import.meta.url));
  slow.end();
  tail.onWindowClosed(fakeWindow(ID_A, BigInt(T0) * 1_000_000n, BigInt(T0 + 1000) * 1_000_000n, []));
  const a = attrs(exporter.getFinishedSpans(), slow.id);
  const names = Object.keys(a).filter((k) => k.startsWith('profiler.ctx_switches.') || k === 'profiler.page_faults');
  // getrusage(RUSAGE_THREAD) needs koffi on Linux; elsewhere the counters are absent, never zero-filled.
  if (process.platform === 'linux' && names.length === 0) assert.fail('no thread counters on Linux');
  for (const k of names) assert.ok(Number.isInteger(a[k]) && (a[k] as number) >= 0, `${k} = ${String(a[k])}`);
  console.log(`# thread counters on the tail span: ${names.map((k) => `${k}=${String(a[k])}`).join(", ")}`);
});

void test('a recorded but unsampled tail span is marked and passed on, not held', () => {
  const exporter = new InMemorySpanExporter();
  const tail = new TailSpanProcessor({
    downstream: new SimpleSpanProcessor(exporter),
    settings: tailSettings(BUDGET_50),
    windowMs: 1000,
    currentProfileId: () => ID_A,
  });
  const recordOnly: Sampler = { shouldSample: () => ({ decision: SamplingDecision.RECORD }), toString: () => 'record-only' };
  const provider = new BasicTracerProvider({ spanProcessors: [tail], sampler: recordOnly });
  const s = provider.getTracer('t').startSpan('slow', { startTime: msToHr(T0) });
  s.end(msToHr(T0 + 80));
  assert.equal(tail.stats().tailSpans, 1);
  assert.equal(tail.stats().held, 0);
  const w = fakeWindow(ID_A, 0n, 1n, []);
  tail.onWindowClosed(w);
  assert.equal(w.tailSpans.length, 1, 'the profile still knows it was a tail span');
});

void test('with the export stage\'s FileExporter as retention: the window stays pinned while a span naming it is held', () => {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-pins-'));
  try {
    const files = new FileExporter({ dir, diagnostics: new Diagnostics() });
    const exporter = new InMemorySpanExporter();
    const tail = new TailSpanProcessor({
      downstream: new SimpleSpanProcessor(exporter),
      settings: tailSettings(BUDGET_50),
      windowMs: 1000,
      currentProfileId: () => ID_A,
      retention: files,
    });
    const tracer = new BasicTracerProvider({ spanProcessors: [tail] }).getTracer('t');
    for (const d of [70, 90]) tracer.startSpan('slow', { startTime: msToHr(T0) }).end(msToHr(T0 + d));
    assert.equal(files.isPinned(ID_A), true);
    tail.onWindowClosed(fakeWindow(ID_A, 0n, 1n, []));
    assert.equal(files.isPinned(ID_A), false, 'unpinned once both held spans are forwarded');
    assert.equal(exporter.getFinishedSpans().length, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

void test('a downstream that throws on one released span does not lose the others', () => {
  const got: string[] = [];
  const downstream: SpanProcessor = {
    onStart: () => undefined,
    onEnd: (s) => {
      if (s.name === 'bad') throw new Error('downstream broke');
      got.push(s.name);
    },
    forceFlush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  };
  const { tail, span } = setup(BUDGET_50, { downstream });
  span('bad', 0, 70).end();
  span('good', 0, 70).end();
  tail.onWindowClosed(fakeWindow(ID_A, 0n, 1n, []));
  assert.deepEqual(got, ['good']);
  assert.equal(tail.stats().errors, 1);
});

void test('releaseAllSync forwards every held span at once without touching downstream flush/shutdown', () => {
  let flushed = 0;
  const got: string[] = [];
  const downstream: SpanProcessor = {
    onStart: () => undefined,
    onEnd: (s) => got.push(String(s.attributes['profiler.exemplar.status'])),
    forceFlush: () => {
      flushed++;
      return Promise.resolve();
    },
    shutdown: () => Promise.resolve(),
  };
  const { tail, span } = setup(BUDGET_50, { downstream });
  span('a', 0, 70).end();
  span('b', 0, 80).end();
  assert.equal(got.length, 0);
  assert.equal(tail.releaseAllSync(), 2);
  assert.deepEqual(got, ['shutdown', 'shutdown']);
  assert.equal(flushed, 0);
  assert.equal(tail.releaseAllSync(), 0);
});

void test('scrubText policy applies to top_frames before they leave on the span', () => {
  const exporter = new InMemorySpanExporter();
  const tail = new TailSpanProcessor({
    downstream: new SimpleSpanProcessor(exporter),
    settings: tailSettings(BUDGET_50),
    windowMs: 1000,
    currentProfileId: () => ID_A,
    scrubText: (t) => t.replace(/token_[a-z0-9]+/g, '[redacted]'),
  });
  const tracer = new BasicTracerProvider({ spanProcessors: [tail] }).getTracer('t');
  const s = tracer.startSpan('slow', { startTime: msToHr(T0) });
  s.end(msToHr(T0 + 70));
  const id = s.spanContext().spanId;
  tail.onWindowClosed(fakeWindow(ID_A, 0n, 1n, [{ spanId: id, fn: 'handler_token_abc123', file: 'a.js', wallNs: 1, cpuNs: 1 }]));
  assert.deepEqual(attrs(exporter.getFinishedSpans(), id)['profiler.top_frames'], ['handler_[redacted] (a.js) 100%']);
});

void test('a failing enrichment still forwards the span, marked, with status error', () => {
  const exporter = new InMemorySpanExporter();
  const tail = new TailSpanProcessor({
    downstream: new SimpleSpanProcessor(exporter),
    settings: tailSettings(BUDGET_50),
    windowMs: 1000,
    currentProfileId: () => ID_A,
    diagnostics: new Diagnostics(() => undefined),
    scrubText: () => {
      throw new Error('policy broke');
    },
  });
  const tracer = new BasicTracerProvider({ spanProcessors: [tail] }).getTracer('t');
  const s = tracer.startSpan('slow', { startTime: msToHr(T0) });
  s.end(msToHr(T0 + 70));
  const id = s.spanContext().spanId;
  tail.onWindowClosed(fakeWindow(ID_A, 0n, 1n, [{ spanId: id, fn: 'f', wallNs: 1, cpuNs: 1 }]));
  const a = attrs(exporter.getFinishedSpans(), id);
  assert.equal(a['profiler.tail'], true);
  assert.equal(a['profiler.exemplar.status'], 'error');
  assert.equal(tail.stats().errors, 1);
});
