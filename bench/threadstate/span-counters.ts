/**
 * Per-span cost of the span window counters: begin() + end() on the main
 * thread, with RuntimeSignals running at its defaults, against parts of it.
 * Variants are timed in interleaved blocks; reports the median ns per span
 * and what it means at 1,000 and 5,000 spans/s.
 *
 *   node .build/runtime/bench/threadstate/span-counters.js [--spans 20000] [--rounds 7]
 */
import { Diagnostics } from '../../src/core/diagnostics.js';
import { Problems } from '../../src/config/env.js';
import { parseRuntimeConfig } from '../../src/config/runtime.js';
import { RuntimeSignals, ThreadCounterReader, ThreadWindowCounters, currentTid } from '../../src/runtime/index.js';
import type { SpanCounterSource } from '../../src/core/counters.js';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? dflt) : dflt;
}

const spans = Number(arg('spans', '20000'));
const rounds = Number(arg('rounds', '7'));

const quiet = new Diagnostics(() => undefined);
const rs = new RuntimeSignals(parseRuntimeConfig({}, new Problems(), { spanCounters: 'syscall' }), quiet);
await rs.start();
const rsSampler = new RuntimeSignals(parseRuntimeConfig({}, new Problems(), { spanCounters: 'sampler' }), quiet);
await rsSampler.start();
const tid = currentTid();
const variants: Record<string, SpanCounterSource> = {
  'empty (loop only)': { begin: () => undefined, end: () => ({}) },
  "full, spanCounters 'syscall'": rs.spanCounters(),
  "full, spanCounters 'sampler'": rsSampler.spanCounters(),
  'getrusage only': new ThreadWindowCounters({ tid, threadCounters: new ThreadCounterReader() }),
  '/proc stat+status per span (not used)': new ThreadWindowCounters({ tid, threadCounters: new ThreadCounterReader({ useKoffi: false }) }),
};

const results = new Map<string, number[]>();
let sink = 0;
for (let r = 0; r < rounds; r++) {
  for (const [name, src] of Object.entries(variants)) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < spans; i++) sink += Object.keys(src.end(src.begin())).length;
    const ns = Number(process.hrtime.bigint() - t0) / spans;
    if (r > 0) (results.get(name) ?? results.set(name, []).get(name) ?? []).push(ns);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? 0;
console.log(`span counters, begin()+end() per span, ${spans} spans x ${rounds - 1} rounds, node ${process.version} (keys seen: ${sink > 0})`);
const base = median(results.get('empty (loop only)') ?? []);
for (const [name, xs] of results) {
  const ns = median(xs) - (name.startsWith('empty') ? 0 : base);
  console.log(
    `  ${name.padEnd(36)} ${(ns / 1000).toFixed(2)} µs/span; at 1k spans/s ${((ns * 1000) / 1e7).toFixed(3)}% of a core, at 5k ${((ns * 5000) / 1e7).toFixed(3)}%`,
  );
}
console.log('  keys:', Object.keys(rs.spanCounters().end(rs.spanCounters().begin())).join(', '));
await rs.stop();
await rsSampler.stop();
