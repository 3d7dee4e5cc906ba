// Encoding cost of a large window: 60 s at 1 ms sampling (60,000 samples),
// 1000 distinct spans, 500 distinct stacks of depth 24.
// Sample times are kept beside the samples (SampleTimes), as in the windows
// spanfuse assembles; `--times labels` gives each sample an
// `end_timestamp_ns` label instead, as in a profile read from a file.
// Run: node dist/bench/encode/run.js [--runs N] [--times beside|labels]
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import { encodeOtlpRequest, encodeOtlpRequestAsync, encodePprofGzip, profileResource, Scrubber, spanfuseVersion } from '../../src/profile/index.js';
import { findLabel, setSampleTimes } from '../../src/core/pprof.js';
import type { Profile } from '../../src/core/pprof.js';
import { LABEL_TIMESTAMP_NS } from '../../src/core/labels.js';
import { handProfile, makeWindow, newSpan } from '../../test/profile/fixtures.js';
import { option } from '../args.js';
import type { HandFrame, HandSample } from '../../test/profile/fixtures.js';

const RUNS = Number(option(process.argv, '--runs', '9'));
const TIMES = option(process.argv, '--times', 'beside');
if (TIMES !== 'beside' && TIMES !== 'labels') throw new Error(`--times: expected beside or labels, got ${TIMES}`);
const SAMPLES = 60_000;
const SPANS = 1000;
const STACKS = 500;
const DEPTH = 24;

// Deterministic pseudo-random numbers so every run encodes the same window.
let seed = 42;
const rnd = (n: number): number => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed % n;
};

const functions: HandFrame[] = Array.from({ length: 2000 }, (_, i) => ({
  name: `fn${i}`,
  file: `/srv/app/src/module${i % 97}.js`,
  line: 1 + (i % 300),
}));
const stacks: HandFrame[][] = Array.from({ length: STACKS }, () => Array.from({ length: DEPTH }, () => functions[rnd(functions.length)]!));
const spans = Array.from({ length: SPANS }, (_, i) => newSpan(`GET /route/${i % 50}`));
const start = 1_790_000_000_000_000_000n;
const samples: HandSample[] = Array.from({ length: SAMPLES }, (_, i) => {
  const span = rnd(10) === 0 ? undefined : spans[rnd(SPANS)];
  return {
    stack: stacks[rnd(STACKS)]!,
    values: [1, 1_000_000 + rnd(50_000), rnd(1_000_000)],
    labels: {
      ...(span ?? {}),
      'thread.id': '4242',
      'thread.name': 'main',
      end_timestamp_ns: start + BigInt(i) * 1_000_000n,
    },
  };
});
const wall = handProfile(
  [
    ['sample', 'count'],
    ['wall', 'nanoseconds'],
    ['cpu', 'nanoseconds'],
  ],
  samples,
);
if (TIMES === 'beside') keepTimesBeside(wall);
const window = makeWindow(wall, start, start + 60_000_000_000n);

/** Move every sample's `end_timestamp_ns` label into the profile's SampleTimes (µs). */
function keepTimesBeside(p: Profile): void {
  const key = p.stringTable.dedup(LABEL_TIMESTAMP_NS);
  const us = new Float64Array(p.sample.length).fill(Number.NaN);
  p.sample.forEach((s, i) => {
    const l = findLabel(s.label, key);
    if (l === undefined) return;
    us[i] = Number(BigInt(l.num) / 1000n);
    s.label = s.label.filter((x) => x !== l);
  });
  setSampleTimes(p, { key, us });
}
const options = { resource: profileResource('bench'), scopeName: 'spanfuse', scopeVersion: spanfuseVersion() };

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

async function main(): Promise<void> {
  const otlpMs: number[] = [];
  const otlpGzMs: number[] = [];
  const pprofMs: number[] = [];
  const asyncMs: number[] = [];
  const scrubMs: number[] = [];
  const scrubMaxBlockMs: number[] = [];
  const scrubber = new Scrubber({ denyKeys: [], allowKeys: [], rules: [], appRoot: '/srv/app', userNames: [] });
  const asyncMaxBlockMs: number[] = [];
  const pprofMaxBlockMs: number[] = [];
  let otlpBytes = 0;
  let otlpGzBytes = 0;
  let pprofBytes = 0;
  for (let r = 0; r < RUNS + 1; r++) {
    // Interleaved; run 0 is warm-up and not counted.
    let t = performance.now();
    const otlp = encodeOtlpRequest(window, options);
    const a = performance.now() - t;
    t = performance.now();
    const gz = gzipSync(otlp);
    const b = performance.now() - t;
    t = performance.now();
    const pp = await encodePprofGzip(wall);
    const c = performance.now() - t;
    // Longest event-loop block while encoding asynchronously.
    let h = monitorEventLoopDelay({ resolution: 1 });
    h.enable();
    t = performance.now();
    await encodeOtlpRequestAsync(window, options);
    const d = performance.now() - t;
    h.disable();
    const dBlock = h.max / 1e6;
    h = monitorEventLoopDelay({ resolution: 1 });
    h.enable();
    await encodePprofGzip(wall);
    h.disable();
    const cBlock = h.max / 1e6;
    t = performance.now();
    scrubber.scrub(window);
    const e = performance.now() - t;
    h = monitorEventLoopDelay({ resolution: 1 });
    h.enable();
    await scrubber.scrubAsync(window);
    h.disable();
    const eBlock = h.max / 1e6;
    if (r === 0) continue;
    scrubMs.push(e);
    scrubMaxBlockMs.push(eBlock);
    asyncMs.push(d);
    asyncMaxBlockMs.push(dBlock);
    pprofMaxBlockMs.push(cBlock);
    otlpMs.push(a);
    otlpGzMs.push(b);
    pprofMs.push(c);
    otlpBytes = otlp.length;
    otlpGzBytes = gz.length;
    pprofBytes = pp.length;
  }
  const line = (name: string, xs: number[], bytes: number): string =>
    `${name.padEnd(34)} median ${median(xs).toFixed(1).padStart(7)} ms  min ${Math.min(...xs).toFixed(1).padStart(7)} ms  ${(bytes / 1024).toFixed(0)} KiB`;
  console.log(`node ${process.version}: window of ${SAMPLES} samples, ${SPANS} spans, ${STACKS} stacks x ${DEPTH} frames, times ${TIMES === 'beside' ? 'beside the samples' : 'as labels'}, ${RUNS} runs`);
  console.log(line('OTLP encode (sync, one call)', otlpMs, otlpBytes));
  console.log(line('OTLP gzip (sync, for comparison)', otlpGzMs, otlpGzBytes));
  console.log(line('pprof encode (sliced) + gzip (async)', pprofMs, pprofBytes));
  console.log(line('OTLP encode async (sliced)', asyncMs, otlpBytes));
  console.log(line('scrub window (sync, one call)', scrubMs, 0));
  console.log(`${'  longest event-loop block, OTLP async'.padEnd(34)} median ${median(asyncMaxBlockMs).toFixed(1).padStart(7)} ms  min ${Math.min(...asyncMaxBlockMs).toFixed(1).padStart(7)} ms`);
  console.log(`${'  longest event-loop block, scrubAsync'.padEnd(34)} median ${median(scrubMaxBlockMs).toFixed(1).padStart(7)} ms  min ${Math.min(...scrubMaxBlockMs).toFixed(1).padStart(7)} ms`);
  console.log(`${'  longest event-loop block, pprof'.padEnd(34)} median ${median(pprofMaxBlockMs).toFixed(1).padStart(7)} ms  min ${Math.min(...pprofMaxBlockMs).toFixed(1).padStart(7)} ms`);
}

await main();
