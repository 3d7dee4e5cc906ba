/**
 * Overhead of the heap sampler: the same service with the sampler off and on
 * at several intervals, all running at once, loaded one at a time in rotating
 * order (interleaved), so drift and noise hit every variant alike. Reports,
 * per variant, throughput and CPU per request relative to `off` in the same
 * round (median over rounds), and RSS at the end.
 *
 *   node .build/heap/bench/heap/overhead.js [--short] [--rounds 6] [--seconds 10]
 *        [--concurrency 8] [--window-ms 10000] [--variants inuse-512K,alloc-512K]
 *        [--out FILE.json]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { arg, closedLoad, median, sleep, startService } from './harness.js';
import type { Service, Variant } from './harness.js';

const short = process.argv.includes('--short');
const rounds = Number(arg('rounds', short ? '2' : '6'));
const seconds = Number(arg('seconds', short ? '3' : '10'));
const concurrency = Number(arg('concurrency', '8'));
const windowMs = Number(arg('window-ms', short ? '2000' : '10000'));
const out = arg('out', '');

const KiB = 1024;
const allVariants: Variant[] = [
  { name: 'off', mode: 'off', intervalBytes: 512 * KiB },
  { name: 'inuse-128K', mode: 'inuse', intervalBytes: 128 * KiB },
  { name: 'inuse-512K', mode: 'inuse', intervalBytes: 512 * KiB },
  { name: 'inuse-1M', mode: 'inuse', intervalBytes: 1024 * KiB },
  { name: 'alloc-128K', mode: 'alloc', intervalBytes: 128 * KiB },
  { name: 'alloc-512K', mode: 'alloc', intervalBytes: 512 * KiB },
  // Diagnostics, only when named with --variants.
  { name: 'session-only', mode: 'session', intervalBytes: 0 },
  { name: 'raw-live-512K', mode: 'raw-live', intervalBytes: 512 * KiB },
  { name: 'raw-alloc-512K', mode: 'raw-alloc', intervalBytes: 512 * KiB },
];
const DIAGNOSTIC = new Set(['session', 'raw-live', 'raw-alloc']);
// --variants a,b picks some ('off' is always first: ratios are against it).
const picked = arg('variants', '').split(',').filter((x) => x !== '');
const variants = allVariants.filter(
  (v, i) => i === 0 || (picked.length === 0 ? !DIAGNOSTIC.has(v.mode) : picked.includes(v.name)),
);

const maxEncoded = new Map<Service, number>();

interface Run {
  readonly rps: number;
  readonly cpuMicrosPerReq: number;
}

async function measure(s: Service): Promise<Run> {
  const before = await s.stats();
  const t0 = performance.now();
  const n = await closedLoad(s, concurrency, seconds * 1000);
  const elapsed = (performance.now() - t0) / 1000;
  const after = await s.stats();
  maxEncoded.set(s, Math.max(maxEncoded.get(s) ?? 0, after.encodedBytes));
  return { rps: n / elapsed, cpuMicrosPerReq: (after.cpuMicros - before.cpuMicros) / n };
}

async function main(): Promise<void> {
  const services: Service[] = [];
  for (const v of variants) services.push(await startService(v, windowMs));
  // Warm-up: JIT and caches, every variant.
  for (const s of services) await closedLoad(s, concurrency, 2000);
  const runs = services.map(() => [] as Run[]);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < services.length; k++) {
      const i = (k + r) % services.length;
      const s = services[i];
      if (s === undefined) continue;
      runs[i]?.push(await measure(s));
      await sleep(200);
    }
  }
  const finals = await Promise.all(services.map((s) => s.stats()));
  const off = runs[0] ?? [];
  const result = {
    kind: 'heap-overhead',
    node: process.version,
    at: new Date().toISOString(),
    rounds,
    secondsPerRun: seconds,
    concurrency,
    windowMs,
    variants: services.map((s, i) => {
      const mine = runs[i] ?? [];
      const tput = mine.map((m, r) => m.rps / (off[r]?.rps ?? Number.NaN));
      const cpu = mine.map((m, r) => m.cpuMicrosPerReq / (off[r]?.cpuMicrosPerReq ?? Number.NaN));
      return {
        name: s.variant.name,
        kind: s.kind,
        backend: s.backend,
        intervalBytes: s.variant.intervalBytes,
        medianRps: median(mine.map((m) => m.rps)),
        medianCpuMicrosPerReq: median(mine.map((m) => m.cpuMicrosPerReq)),
        throughputRatio: median(tput),
        cpuPerRequestRatio: median(cpu),
        throughputRatios: tput,
        cpuPerRequestRatios: cpu,
        rssEnd: finals[i]?.rss,
        heapUsedEnd: finals[i]?.heapUsed,
        windows: finals[i]?.windows,
        maxEncodedProfileBytes: maxEncoded.get(s),
        diagnostics: finals[i]?.diagnostics,
      };
    }),
  };
  await Promise.all(services.map((s) => s.close()));
  for (const v of result.variants) {
    console.log(
      `${v.name.padEnd(11)} ${v.kind.padEnd(6)} ${v.backend.padEnd(9)} rps ${v.medianRps.toFixed(0).padStart(6)}  ` +
        `throughput x${v.throughputRatio.toFixed(3)}  cpu/req x${v.cpuPerRequestRatio.toFixed(3)}  ` +
        `rss ${((v.rssEnd ?? 0) / 2 ** 20).toFixed(1)}M  profile <= ${String(v.maxEncodedProfileBytes)} B`,
    );
  }
  if (out !== '') {
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
    console.log(`wrote ${out}`);
  }
}

await main();
