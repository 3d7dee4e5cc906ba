import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import { ROOT_CONTEXT, context } from '@opentelemetry/api';
import type { Span } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { start } from '../../src/index.js';
import { Profile } from '../../src/core/pprof.js';
import type { WindowProfile } from '../../src/core/window.js';
import { TailSpanProcessor, tailSettings } from '../../src/exemplars/index.js';

/** CPU work whose amount is set by the iteration count. */
function burnCpu(iterations: number): number {
  let x = 1;
  for (let i = 0; i < iterations; i++) x = (Math.imul(x, 1103515245) + 12345) | 0;
  return x;
}

/** CPU time of this thread where Node offers it (>= 23.9), else of the process. */
const threadCpu = (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage?.bind(process);
function cpuNs(): number {
  const u = threadCpu !== undefined ? threadCpu() : process.cpuUsage();
  return (u.user + u.system) * 1000;
}

/** Iterations of `burnCpu` that take about `targetMs` of CPU on this machine. */
function calibrate(targetMs: number): number {
  burnCpu(20_000_000); // JIT warm-up
  let best = Infinity;
  for (let k = 0; k < 3; k++) {
    const t = cpuNs();
    burnCpu(10_000_000);
    best = Math.min(best, cpuNs() - t);
  }
  return Math.round((targetMs * 1e6 * 10_000_000) / best);
}

/** A window as the pipeline hands it over, rebuilt from the file the exporter wrote. */
function windowFromFile(dir: string, profileId: string, mode: WindowProfile['mode']): WindowProfile {
  const file = readdirSync(dir).find((f) => f.includes(profileId) && f.endsWith('.pb.gz') && !f.includes('.heap.') && !f.includes('.offcpu.'));
  assert.ok(file, `a wall profile file for ${profileId} in ${readdirSync(dir).join(', ')}`);
  return {
    profileId,
    seq: 0,
    startUnixNs: 0n,
    endUnixNs: 0n,
    samplingIntervalMicros: 1000,
    mode,
    wall: Profile.decode(gunzipSync(readFileSync(join(dir, file)))),
    attributes: {},
    tailSpans: [],
  };
}

function spanAttrs(spans: readonly ReadableSpan[], name: string): ReadableSpan['attributes'] {
  const s = spans.find((x) => x.name === name);
  assert.ok(s, `span ${name} exported`);
  return s.attributes;
}

void test('real sampler at 1 ms: CPU burn, await sleep and Atomics.wait show in the tail span figures; the named profile holds the span', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-exemplars-'));
  const sf = start({ outputDir: dir, samplingIntervalMicros: 1000, windowMs: 600_000, tracerProvider: 'off', spansFile: false });
  assert.ok(sf, 'spanfuse started');
  try {
    const exporter = new InMemorySpanExporter();
    const tail = new TailSpanProcessor({
      downstream: new SimpleSpanProcessor(exporter),
      settings: tailSettings({ rule: { quantile: undefined, quantileLabel: undefined, budgetMs: 30 } }),
      windowMs: 600_000,
      currentProfileId: () => sf.currentProfileId,
    });
    const provider = new BasicTracerProvider({ spanProcessors: [sf.spanProcessor(), tail] });
    const tracer = provider.getTracer('e2e');
    const iterations = calibrate(150);
    let knownCpuNs = 0;

    await tracer.startActiveSpan('cpu-burn', async (span: Span) => {
      await sleep(1);
      const t = cpuNs();
      burnCpu(iterations);
      knownCpuNs = cpuNs() - t;
      span.end();
    });
    await tracer.startActiveSpan('sleepy', async (span: Span) => {
      burnCpu(Math.round(iterations / 50));
      await sleep(50);
      span.end();
    });
    tracer.startActiveSpan('blocked', (span: Span) => {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
      span.end();
    });
    tracer.startActiveSpan('quick', (span: Span) => span.end());
    await sleep(5);

    assert.equal(exporter.getFinishedSpans().length, 1, 'only the quick span passed; three tail spans are held');
    const profileId = sf.currentProfileId;
    await sf.flush();

    // The profile the spans name exists in the output ...
    const window = windowFromFile(dir, profileId, sf.mode);
    const wall = window.wall;
    // ... and, handed to the processor as the pipeline will, releases the held spans.
    const result = tail.onWindowClosed(window);
    assert.equal(result.released, 3);
    assert.deepEqual(window.tailSpans.map((r) => r.operation).sort(), ['blocked (INTERNAL)', 'cpu-burn (INTERNAL)', 'sleepy (INTERNAL)']);
    const spans = exporter.getFinishedSpans();
    assert.equal(spans.length, 4);

    const burn = spanAttrs(spans, 'cpu-burn');
    assert.equal(burn['profiler.exemplar.id'], profileId);
    assert.equal(burn['profiler.exemplar.status'], 'complete');
    const cpu = burn['profiler.cpu.time_ns'] as number;
    assert.ok(Math.abs(cpu - knownCpuNs) <= 0.25 * knownCpuNs, `cpu.time_ns ${cpu} vs known burn ${knownCpuNs}`);
    assert.ok((burn['profiler.samples'] as number) > 0);
    assert.match((burn['profiler.top_frames'] as string[])[0] ?? '', /^burnCpu /);

    // The named profile holds samples labelled with the span's id.
    const burnId = spans.find((s) => s.name === 'cpu-burn')!.spanContext().spanId;
    const strings = wall.stringTable.strings;
    const labelled = wall.sample.filter((s) => s.label.some((l) => strings[Number(l.key)] === 'span_id' && strings[Number(l.str)] === burnId));
    assert.ok(labelled.length > 0, 'samples labelled with the tail span id');

    const sleepy = spanAttrs(spans, 'sleepy');
    const sleepyOff = sleepy['profiler.offcpu.time_ns'] as number;
    assert.ok(sleepyOff >= 45e6, `await sleep(50) shows as off-CPU: ${sleepyOff}`);

    const blocked = spanAttrs(spans, 'blocked');
    const blockedOff = blocked['profiler.offcpu.time_ns'] as number;
    const blockedCpu = blocked['profiler.cpu.time_ns'] as number;
    assert.ok(blockedOff >= 180e6, `Atomics.wait(200) shows as off-CPU: ${blockedOff}`);
    assert.ok(blockedCpu < 50e6, `Atomics.wait burns little CPU: ${blockedCpu}`);
    console.log(
      `# known burn ${(knownCpuNs / 1e6).toFixed(1)} ms, profiler.cpu.time_ns ${(cpu / 1e6).toFixed(1)} ms; ` +
        `sleepy off-CPU ${(sleepyOff / 1e6).toFixed(1)} ms; blocked off-CPU ${(blockedOff / 1e6).toFixed(1)} ms, ` +
        `wall ${((blocked['profiler.wall.time_ns'] as number) / 1e6).toFixed(1)} ms, samples ${String(blocked['profiler.samples'])}`,
    );

    // A span whose samples straddle two windows: half its burn in each.
    const idA = sf.currentProfileId;
    let knownLongNs = 0;
    await tracer.startActiveSpan('long', async (span: Span) => {
      let t = cpuNs();
      burnCpu(Math.round(iterations * 0.6));
      knownLongNs += cpuNs() - t;
      // Close window A mid-span, outside the span's context so the export
      // work is not the span's.
      await context.with(ROOT_CONTEXT, () => sf.flush());
      tail.onWindowClosed(windowFromFile(dir, idA, sf.mode));
      t = cpuNs();
      burnCpu(Math.round(iterations * 0.6));
      knownLongNs += cpuNs() - t;
      span.end();
    });
    const idB = sf.currentProfileId;
    assert.notEqual(idA, idB);
    await sf.flush();
    tail.onWindowClosed(windowFromFile(dir, idB, sf.mode));
    const long = spanAttrs(exporter.getFinishedSpans(), 'long');
    assert.equal(long['profiler.exemplar.id'], idB);
    const longCpu = long['profiler.cpu.time_ns'] as number;
    assert.ok(Math.abs(longCpu - knownLongNs) <= 0.25 * knownLongNs, `straddling span: cpu.time_ns ${longCpu} vs known ${knownLongNs}`);
    console.log(`# straddling span: known burn ${(knownLongNs / 1e6).toFixed(1)} ms, profiler.cpu.time_ns ${(longCpu / 1e6).toFixed(1)} ms`);
    await provider.shutdown();
  } finally {
    await sf.shutdown();
    rmSync(dir, { recursive: true, force: true });
  }
});
