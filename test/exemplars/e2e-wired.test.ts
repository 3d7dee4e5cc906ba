import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import type { Span } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { start } from '../../src/index.js';
import { Profile } from '../../src/core/pprof.js';

function burnCpu(iterations: number): number {
  let x = 1;
  for (let i = 0; i < iterations; i++) x = (Math.imul(x, 1103515245) + 12345) | 0;
  return x;
}

const threadCpu = (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage?.bind(process);
function cpuNs(): number {
  const u = threadCpu !== undefined ? threadCpu() : process.cpuUsage();
  return (u.user + u.system) * 1000;
}

void test('wired by start(): sf.spanProcessor(downstream) marks, holds and enriches; the window named by the span is on disk with its samples', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-exemplars-wired-'));
  const sf = start({
    outputDir: dir,
    samplingIntervalMicros: 1000,
    windowMs: 600_000,
    tracerProvider: 'off',
    spansFile: false,
    tail: { thresholdMs: 40 },
  });
  assert.ok(sf, 'spanfuse started');
  try {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [sf.spanProcessor(new SimpleSpanProcessor(exporter))] });
    const tracer = provider.getTracer('wired');
    burnCpu(20_000_000);
    let known = 0;
    await tracer.startActiveSpan('wired-burn', async (span: Span) => {
      await sleep(1);
      const t = cpuNs();
      // Burn until 100 ms of CPU: well over the 40 ms budget on any machine.
      while (cpuNs() - t < 100e6) burnCpu(1_000_000);
      known = cpuNs() - t;
      span.end();
    });
    tracer.startActiveSpan('wired-quick', (span: Span) => span.end());
    assert.deepEqual(
      exporter.getFinishedSpans().map((s) => s.name),
      ['wired-quick'],
      'the tail span waits for its window',
    );
    await sf.flush();
    const burn = exporter.getFinishedSpans().find((s) => s.name === 'wired-burn');
    assert.ok(burn, 'released when the pipeline closed the window');
    const a = burn.attributes;
    assert.equal(a['profiler.tail'], true);
    assert.equal(a['profiler.tail.quantile'], 'budget');
    assert.equal(a['profiler.exemplar.status'], 'complete');
    const cpu = a['profiler.cpu.time_ns'] as number;
    // The figure is the sum of the span's samples' CPU; a sample V8 drops takes
    // its CPU with it. At 1 ms, V8 drops 10-20% of samples on an idle 2-core
    // machine and more under CI load (72% of the known burn seen there), so
    // this bound only says the figure is the span's burn, not a stray window.
    // The exact check is below: the figure equals its samples on disk.
    assert.ok(cpu >= 0.5 * known && cpu <= 1.25 * known, `cpu.time_ns ${cpu} vs known ${known}`);
    const id = a['profiler.exemplar.id'] as string;
    const file = readdirSync(dir).find((f) => f.includes(id) && f.endsWith('.pb.gz') && !f.includes('.heap.') && !f.includes('.offcpu.'));
    assert.ok(file, `profile ${id} on disk: ${readdirSync(dir).join(', ')}`);
    const p = Profile.decode(gunzipSync(readFileSync(join(dir, file))));
    const s = p.stringTable.strings;
    const spanId = burn.spanContext().spanId;
    const mine = p.sample.filter((x) => x.label.some((l) => s[Number(l.key)] === 'span_id' && s[Number(l.str)] === spanId));
    assert.ok(mine.length > 0, 'the named profile holds samples labelled with the span id');
    const cpuIdx = p.sampleType.findIndex((t) => s[Number(t.type)] === 'cpu');
    assert.ok(cpuIdx >= 0, 'the profile has a cpu sample type');
    const onDisk = mine.reduce((sum, x) => sum + Number(x.value[cpuIdx]), 0);
    assert.ok(Math.abs(onDisk - cpu) <= 1, `cpu.time_ns ${cpu} is the sum of the span's samples on disk (${onDisk})`);
    console.log(`# wired: known ${(known / 1e6).toFixed(1)} ms, cpu.time_ns ${(cpu / 1e6).toFixed(1)} ms, ${mine.length} samples in ${file}`);
    await provider.shutdown();
  } finally {
    await sf.shutdown();
    rmSync(dir, { recursive: true, force: true });
  }
});
