import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SpanKind } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Problems } from '../../src/config/env.js';
import { resolveTailConfig } from '../../src/config/tail.js';
import { Diagnostics } from '../../src/core/diagnostics.js';
import { TailSpanProcessor } from '../../src/exemplars/index.js';
import type { TailSettings } from '../../src/exemplars/index.js';
import { JsonlSpanProcessor, SPANS_FILE } from '../../src/tracing/index.js';
import { exactQuantile, hrToMs, insertSorted } from './helpers.js';

const REQUESTS = 2500;
const SLOW_EVERY = 125; // 0.8%

function burnCpu(iterations: number): number {
  let x = 1;
  for (let i = 0; i < iterations; i++) x = (Math.imul(x, 1103515245) + 12345) | 0;
  return x;
}

/** Iterations that take about `ms` here (best of several runs, so a preempted run does not skew it). */
function iterationsFor(ms: number): number {
  burnCpu(5_000_000);
  let best = Infinity;
  for (let k = 0; k < 7; k++) {
    const t = process.hrtime.bigint();
    burnCpu(1_000_000);
    best = Math.min(best, Number(process.hrtime.bigint() - t) / 1_000_000);
  }
  return Math.max(1, Math.round((ms * 1e6) / best));
}

/**
 * An HTTP service with one route; every request is a SERVER span with
 * `http.route`. Request i (i % 125 == 7) runs an extra CPU burn making it
 * far more than 5x slower. Requests go one at a time over a keep-alive agent.
 */
async function run(
  settings: TailSettings,
  downstream: SpanProcessor,
  requests: number,
): Promise<{ provider: BasicTracerProvider; slowIndex: Set<number> }> {
  const tail = new TailSpanProcessor({ downstream, settings, windowMs: 10_000, currentProfileId: () => 'd'.repeat(32) });
  const provider = new BasicTracerProvider({ spanProcessors: [tail] });
  const tracer = provider.getTracer('bimodal');
  const base = iterationsFor(0.5);
  // Far above the scheduling noise of a shared 2-core machine (fast spans
  // measured up to ~25 ms when preempted), so "slow" means the burn.
  const extra = iterationsFor(30);
  const slowIndex = new Set<number>();
  const server = createServer((req, res) => {
    const i = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('i'));
    const span = tracer.startSpan('GET', { kind: SpanKind.SERVER, attributes: { 'http.route': '/orders/:id', 'req.index': i } });
    burnCpu(base);
    if (i % SLOW_EVERY === 7) burnCpu(extra);
    span.end();
    res.end('ok');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (let i = 0; i < requests; i++) {
      if (i % SLOW_EVERY === 7) slowIndex.add(i);
      await new Promise<void>((resolve, reject) => {
        const r = request({ host: '127.0.0.1', port, path: `/orders/${i}?i=${i}`, agent }, (res) => {
          res.resume();
          res.on('end', resolve);
        });
        r.on('error', reject);
        r.end();
      });
    }
  } finally {
    agent.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  }
  await provider.forceFlush();
  return { provider, slowIndex };
}

void test('bimodal HTTP route, p99 mode: >= 99% of slow requests marked; agreement with the exact quantile outside the error band', async (t) => {
  const problems = new Problems();
  // No decay: the offline check replays exactly the observations the sketch holds.
  const settings = resolveTailConfig(undefined, { SPANFUSE_TAIL_WARMUP: '100', SPANFUSE_TAIL_HALF_LIFE_MS: '0' }, problems);
  assert.deepEqual(problems.list, []);
  const exporter = new InMemorySpanExporter();
  const { provider, slowIndex } = await run(settings, new SimpleSpanProcessor(exporter), REQUESTS);
  // Spans reach the exporter in end order except held tail spans; restore end order.
  const spans = [...exporter.getFinishedSpans()].sort((a, b) => (a.attributes['req.index'] as number) - (b.attributes['req.index'] as number));
  assert.equal(spans.length, REQUESTS);
  const alpha = settings.relativeAccuracy;
  const seen: number[] = [];
  let slowAfter = 0;
  let slowMarked = 0;
  let slowExact = 0;
  let outside = 0;
  let agree = 0;
  for (const s of spans) {
    const i = s.attributes['req.index'] as number;
    const d = hrToMs(s.duration);
    const marked = s.attributes['profiler.tail'] === true;
    if (i >= settings.warmup) {
      const exact = exactQuantile(seen, 0.99);
      if (slowIndex.has(i)) {
        slowAfter++;
        if (marked) slowMarked++;
        if (d > exact) slowExact++;
      }
      if (Math.abs(d - exact) > alpha * exact) {
        outside++;
        if (marked === d > exact) agree++;
      }
    }
    insertSorted(seen, d);
  }
  const slowMs = spans.filter((s) => slowIndex.has(s.attributes['req.index'] as number)).map((s) => hrToMs(s.duration));
  const median = exactQuantile(seen, 0.5);
  assert.ok(Math.min(...slowMs) >= 5 * median, `slow requests are >= 5x the median (${Math.min(...slowMs)} vs ${median})`);
  assert.ok(slowAfter >= 19);
  assert.ok(agree / outside >= 0.99, `agreement ${agree}/${outside}`);
  const top = [...seen].reverse().slice(0, 40).map((x) => x.toFixed(1));
  const detail = `slow ms ${slowMs.map((x) => x.toFixed(1)).join(' ')}; top ms ${top.join(' ')}`;
  // Span durations are wall time: when other processes saturate the CPUs,
  // preempted fast requests outnumber 1% and the exact p99 itself lands among
  // them. Then no detector can mark the slow ones, and the test says so.
  if (slowExact / slowAfter < 0.99) {
    t.skip(`machine too busy: the exact p99 classifies only ${slowExact}/${slowAfter} slow requests as tail (${detail})`);
    await provider.shutdown();
    return;
  }
  assert.ok(slowMarked / slowAfter >= 0.99, `${slowMarked}/${slowAfter} slow requests marked; ${detail}`);
  await provider.shutdown();
  console.log(`# slow marked ${slowMarked}/${slowAfter}; agreement outside the ±${alpha * 100}% band ${agree}/${outside}; median ${median.toFixed(3)} ms`);
});

void test('SPANFUSE_TAIL_THRESHOLD_MS alone: exactly the requests above the budget are marked; the spans.jsonl writer gets them enriched', async () => {
  const problems = new Problems();
  // A long hold: on a loaded machine the run can outlast window + margin.
  const settings = resolveTailConfig(undefined, { SPANFUSE_TAIL_THRESHOLD_MS: '2', SPANFUSE_TAIL_HOLD_MAX_DELAY_MS: '600000' }, problems);
  assert.deepEqual(problems.list, []);
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-tail-jsonl-'));
  try {
    const jsonl = new JsonlSpanProcessor({ dir, maxFileBytes: 64 * 1024 * 1024, diagnostics: new Diagnostics() });
    const { provider } = await run(settings, jsonl, 1000);
    await provider.shutdown();
    const lines = readFileSync(join(dir, SPANS_FILE), 'utf8').trim().split('\n');
    assert.equal(lines.length, 1000);
    let over = 0;
    for (const line of lines) {
      const rec = JSON.parse(line) as { startTimeUnixNano: string; endTimeUnixNano: string; attributes: Record<string, unknown> };
      const durationMs = Number(BigInt(rec.endTimeUnixNano) - BigInt(rec.startTimeUnixNano)) / 1e6;
      const marked = rec.attributes['profiler.tail'] === true;
      assert.equal(marked, durationMs > 2, `duration ${durationMs} ms`);
      if (marked) {
        over++;
        assert.equal(rec.attributes['profiler.tail.quantile'], 'budget');
        // No sampler runs here, so held spans leave at the provider's flush.
        assert.equal(rec.attributes['profiler.exemplar.status'], 'flush');
      }
    }
    assert.ok(over >= 8, `at least the slow requests are over budget (${over})`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
