/**
 * The load of issue 11's event-loop and memory cases, in one process: a few
 * concurrent loops, each opening a span, doing a fixed amount of CPU, awaiting
 * (`setImmediate`), doing the rest of its CPU and ending the span, paced to a
 * target rate. A 1 ms interval timer records every gap between its ticks; RSS
 * and heap are sampled once a second. Runs for `EL_DURATION_MS`, then prints
 * one JSON line on stdout and exits.
 *
 * Tracing: with `EL_TRACING=otel` the app registers a BasicTracerProvider
 * with an AsyncLocalStorageContextManager (the control); with `spanfuse` it
 * registers nothing (spanfuse was preloaded with `--import` and installed its
 * provider). `none` makes no spans at all.
 *
 * Attribution experiments (control tracing, no spanfuse): `EL_PPROF=only`
 * runs @datadog/pprof's wall profiler (CPED, contexts, CPU time, 10 ms, 10 s
 * windows) with no per-span context; `EL_PPROF=run` also enters every span
 * with `time.runWithContext({ span })` (what a span-labelling profiler does);
 * `EL_PPROF=small` does the same with a context that holds only the span id;
 * `EL_PPROF=smi` with a small integer (spanfuse labels with a span-table id,
 * see src/context/span-slots.ts), so the holder's handle keeps no object;
 * `EL_PPROF=als` enters a plain AsyncLocalStorage per span instead.
 */
import { performance } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { setImmediate as tick, setTimeout as sleep } from 'node:timers/promises';
import { cpuKernel, kernelIterationsFor } from '../overhead/work.js';
import { registerOtelControl } from '../overhead/otel-control.js';
import { hasThreadCpu, threadCpuMs } from '../thread-cpu.js';

const env = process.env;
const durationMs = Number(env['EL_DURATION_MS'] ?? 25_000);
const concurrency = Number(env['EL_CONCURRENCY'] ?? 4);
const spansPerSecond = Number(env['EL_RATE'] ?? 2500);
const iterations = Number(env['EL_ITERATIONS'] ?? 0);
const tracing = env['EL_TRACING'] ?? 'otel';

interface SpanLike {
  end(): void;
}
type StartActive = (name: string, fn: (span: SpanLike) => Promise<void>) => Promise<void>;

async function setupTracing(): Promise<StartActive> {
  if (tracing === 'none') return async (_name, fn) => fn({ end: () => {} });
  const api = await import('@opentelemetry/api');
  if (tracing === 'otel') {
    await registerOtelControl();
  }
  const tracer = api.trace.getTracer('eventloop-bench');
  const pp = env['EL_PPROF'];
  if (pp === 'als') {
    const { AsyncLocalStorage } = await import('node:async_hooks');
    const als = new AsyncLocalStorage<unknown>();
    return (name, fn) => tracer.startActiveSpan(name, (span) => als.run({ span }, () => fn(span)));
  }
  if (pp !== undefined) {
    const { time } = await import('@datadog/pprof');
    time.start({ intervalMicros: 10000, withContexts: true, collectCpuTime: true, useCPED: true, workaroundV8Bug: true, lineNumbers: false });
    setInterval(() => time.stop(true, () => ({})), 10000).unref();
    if (pp === 'small') {
      return (name, fn) =>
        tracer.startActiveSpan(name, (span) => time.runWithContext({ id: span.spanContext().spanId }, () => fn(span)));
    }
    if (pp === 'smi') return (name, fn) => tracer.startActiveSpan(name, (span) => time.runWithContext(1 as unknown as object, () => fn(span)));
    if (pp === 'run') return (name, fn) => tracer.startActiveSpan(name, (span) => time.runWithContext({ span }, () => fn(span)));
  }
  return (name, fn) => tracer.startActiveSpan(name, fn);
}

async function main(): Promise<void> {
  const startActive = await setupTracing();
  const half = iterations > 0 ? iterations / 2 : kernelIterationsFor(0.2);
  let spans = 0;
  let sink = 0;
  const stopAt = performance.now() + durationMs;

  // Gap recorder: the largest delay between 1 ms ticks is the longest block.
  // On a shared machine a gap is often the process waiting for a core, not
  // blocking: the main thread's own CPU time between two ticks (Node >= 23.9)
  // is the part of a gap this process spent running.
  const gaps: number[] = [];
  const cpuGaps: number[] = [];
  const bigGaps: { atMs: number; gapMs: number; cpuMs: number }[] = [];
  // Gaps after the start-up (the first EL_STEADY_MS): V8 sizes its young
  // generation and compiles the hot code then, in the control too.
  const steadyMs = Number(env['EL_STEADY_MS'] ?? 5000);
  let maxCpuGapSteady = 0;
  const t0 = performance.now();
  // The start on the monotonic clock V8's CPU profiler stamps its samples
  // with (µs), so a gap can be found in a `--cpu-prof` profile of the run.
  const t0MonotonicUs = Number(process.hrtime.bigint() / 1000n);
  let last = t0;
  let lastCpu = threadCpuMs();
  const timer = setInterval(() => {
    const now = performance.now();
    const cpu = threadCpuMs();
    const gap = now - last;
    const cpuGap = Math.min(gap, cpu - lastCpu);
    last = now;
    lastCpu = cpu;
    gaps.push(gap);
    cpuGaps.push(cpuGap);
    if (gap > 5) bigGaps.push({ atMs: Math.round(now - t0), gapMs: round1(gap), cpuMs: round1(cpuGap) });
    if (now - t0 >= steadyMs && cpuGap > maxCpuGapSteady) maxCpuGapSteady = cpuGap;
  }, 1);

  const memory: {
    atMs: number;
    rssMb: number;
    heapMb: number;
    heapTotalMb: number;
    externalMb: number;
    /** Committed size of each V8 heap space (MB). */
    spaces: Record<string, number>;
  }[] = [];
  const memTimer = setInterval(() => {
    const m = process.memoryUsage();
    memory.push({
      atMs: Math.round(performance.now() - t0),
      rssMb: round1(m.rss / 2 ** 20),
      heapMb: round1(m.heapUsed / 2 ** 20),
      heapTotalMb: round1(m.heapTotal / 2 ** 20),
      externalMb: round1(m.external / 2 ** 20),
      spaces: Object.fromEntries(getHeapSpaceStatistics().map((x) => [x.space_name, round1(x.space_size / 2 ** 20)])),
    });
  }, 1000);

  // CPU per span is counted after a warm-up (start-up, module loading and JIT
  // warm-up would otherwise dominate a short run).
  const warmupMs = Number(env['EL_WARMUP_MS'] ?? 0);
  let cpuAtWarm = process.cpuUsage();
  let spansAtWarm = 0;
  if (warmupMs > 0) {
    setTimeout(() => {
      cpuAtWarm = process.cpuUsage();
      spansAtWarm = spans;
    }, warmupMs).unref();
  }

  const perLoopIntervalMs = (1000 * concurrency) / spansPerSecond;
  const loop = async (k: number): Promise<void> => {
    let due = performance.now() + (k * perLoopIntervalMs) / concurrency;
    while (performance.now() < stopAt) {
      const wait = due - performance.now();
      if (wait > 1) await sleep(Math.floor(wait));
      due += perLoopIntervalMs;
      await startActive('work', async (span) => {
        sink ^= cpuKernel(half);
        await tick();
        sink ^= cpuKernel(half);
        span.end();
      });
      spans++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, k) => loop(k)));
  clearInterval(timer);
  clearInterval(memTimer);
  const elapsed = performance.now() - t0;
  gaps.sort((a, b) => a - b);
  cpuGaps.sort((a, b) => a - b);
  const q = (p: number, xs = gaps): number => round1(xs[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? 0);
  const out = {
    tracing,
    t0MonotonicUs,
    spans,
    spansPerSecond: Math.round(spans / (elapsed / 1000)),
    sink: sink & 1,
    maxGapMs: round1(gaps[gaps.length - 1] ?? 0),
    p99GapMs: q(0.99),
    p999GapMs: q(0.999),
    maxCpuGapMs: round1(cpuGaps[cpuGaps.length - 1] ?? 0),
    p99CpuGapMs: q(0.99, cpuGaps),
    p999CpuGapMs: q(0.999, cpuGaps),
    steadyMs,
    maxCpuGapSteadyMs: round1(maxCpuGapSteady),
    threadCpu: hasThreadCpu,
    bigGaps: bigGaps.sort((a, b) => b.cpuMs - a.cpuMs).slice(0, 20),
    gapsOver5Ms: bigGaps.length,
    cpuGapsOver5Ms: cpuGaps.filter((g) => g > 5).length,
    memory,
    cpuMs: Math.round((process.cpuUsage().user + process.cpuUsage().system) / 1000),
    /** Process CPU per span after the warm-up (µs). */
    cpuUsPerSpanAfterWarmup: round1(cpuSince(cpuAtWarm) / Math.max(1, spans - spansAtWarm)),
    /** The preloaded spanfuse's `stats().selfTime` (its longest blocks among them), when it runs. */
    selfTime: spanfuseSelfTime(),
  };
  // A pipe's writes are asynchronous and process.exit() drops what is still
  // queued: a 10-minute run's line (~220 KB) was cut short. Exit once written.
  await new Promise<void>((done) => process.stdout.write(JSON.stringify(out) + '\n', () => done()));
}


/** `stats().selfTime` of the spanfuse running in this thread (found the way `current()` finds it), if any. */
function spanfuseSelfTime(): unknown {
  const running = (globalThis as Record<symbol, { stats(): { selfTime?: unknown } } | undefined>)[Symbol.for('spanfuse.active')];
  return running?.stats().selfTime;
}

function cpuSince(from: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(from);
  return d.user + d.system;
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(String(err) + '\n');
    process.exit(1);
  },
);
