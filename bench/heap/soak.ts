/**
 * Soak: the same service three times side by side under the same steady load,
 * heap sampler off / in-use (default interval) / allocation mode, for a fixed
 * time. Reports the RSS and heap-used slope of each (least squares over the
 * samples after warm-up, bytes per minute, with standard error) and writes a
 * JSON result.
 *
 *   node .build/heap/bench/heap/soak.js [--minutes 30 | --short] [--rate 150]
 *        [--variants off,inuse,alloc | off,inuse-128K,inuse-512K,inuse-1M]
 *        [--out bench/results/heap-soak-NAME.json]
 *
 * It also gives the steadiest CPU overhead figure on a noisy machine: every
 * variant serves the same request rate over the same minutes, so its CPU time
 * relative to the first variant (`cpuRatio`) is the sampler's cost.
 *
 * Side by side rather than one after another so both see the same machine
 * noise; the profiler's own growth is the on slope minus the off slope.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { DEFAULT_HEAP_INTERVAL_BYTES } from '../../src/config/heap.js';
import { arg, linearSlope, sleep, startService, steadyLoad } from './harness.js';
import type { ServiceStats, Variant } from './harness.js';

const short = process.argv.includes('--short');
const minutes = Number(arg('minutes', short ? '1' : '30'));
const rate = Number(arg('rate', '150'));
const everyMs = Number(arg('every-ms', short ? '2000' : '10000'));
const windowMs = Number(arg('window-ms', short ? '5000' : '60000'));
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const out = arg('out', `bench/results/heap-soak-${short ? 'short-' : ''}${stamp}.json`);

/**
 * `off`, `inuse`, `alloc`, or with an interval: `inuse-128K`, `alloc-1M`.
 * Diagnostics: `session` (inspector session only), `raw-live` / `raw-alloc`
 * (raw inspector sampling without / with collected objects, never collected).
 */
function parseVariant(name: string): Variant {
  const m = /^(off|inuse|alloc|session|raw-live|raw-alloc)(?:-(\d+)([KM]))?$/.exec(name);
  if (m === null) throw new Error(`bad variant ${name}: expected off, inuse[-128K], alloc[-1M], raw-live[-16M]`);
  const size = m[2] === undefined ? DEFAULT_HEAP_INTERVAL_BYTES : Number(m[2]) * (m[3] === 'M' ? 2 ** 20 : 1024);
  return { name, mode: m[1] as Variant['mode'], intervalBytes: size };
}
// The first variant is the control the CPU ratios are taken against.
const variants: Variant[] = arg('variants', 'off,inuse,alloc').split(',').map(parseVariant);

async function main(): Promise<void> {
  const services = await Promise.all(variants.map((v) => startService(v, windowMs)));
  const loads = services.map((s) => steadyLoad(s, rate));
  const t0 = Date.now();
  const series = services.map(() => [] as { tMin: number; stats: ServiceStats }[]);
  const durationMs = minutes * 60_000;
  while (Date.now() - t0 < durationMs) {
    await sleep(everyMs);
    const tMin = (Date.now() - t0) / 60_000;
    const all = await Promise.all(services.map((s) => s.stats()));
    all.forEach((stats, i) => series[i]?.push({ tMin, stats }));
    if (!short) {
      const line = all.map((s, i) => `${variants[i]?.name}: rss=${(s.rss / 2 ** 20).toFixed(1)}M heap=${(s.heapUsed / 2 ** 20).toFixed(1)}M`);
      console.log(`${tMin.toFixed(1)} min  ${line.join('  ')}`);
    }
  }
  const loadResults = loads.map((l) => l.stop());
  // Warm-up: the first 10% (JIT, caches filling) is not part of the slope.
  const warmMin = minutes * 0.1;
  const result = {
    kind: 'heap-soak',
    node: process.version,
    startedAt: new Date(t0).toISOString(),
    minutes,
    ratePerSec: rate,
    sampleEveryMs: everyMs,
    windowMs,
    warmupMinutes: warmMin,
    variants: services.map((s, i) => {
      const pts = (series[i] ?? []).filter((p) => p.tMin >= warmMin);
      const xs = pts.map((p) => p.tMin);
      const last = pts.at(-1)?.stats;
      return {
        name: s.variant.name,
        mode: s.variant.mode,
        kind: s.kind,
        backend: s.backend,
        intervalBytes: s.variant.intervalBytes,
        requests: loadResults[i]?.sent,
        errors: loadResults[i]?.errors,
        samples: pts.length,
        rssSlopeBytesPerMin: linearSlope(xs, pts.map((p) => p.stats.rss)),
        heapUsedSlopeBytesPerMin: linearSlope(xs, pts.map((p) => p.stats.heapUsed)),
        lastRss: last?.rss,
        lastHeapUsed: last?.heapUsed,
        cpuMicros: last?.cpuMicros,
        // Same steady load for all, side by side: CPU used relative to the control.
        cpuRatio: (last?.cpuMicros ?? Number.NaN) / (series[0]?.at(-1)?.stats.cpuMicros ?? Number.NaN),
        windows: last?.windows,
        gcCount: last?.gcCount,
        gcMs: last?.gcMs,
        lastEncodedProfileBytes: last?.encodedBytes,
        diagnostics: last?.diagnostics,
        series: (series[i] ?? []).map((p) => [Number(p.tMin.toFixed(3)), p.stats.rss, p.stats.heapUsed]),
      };
    }),
  };
  await Promise.all(services.map((s) => s.close()));
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
  for (const v of result.variants) {
    const r = v.rssSlopeBytesPerMin;
    const h = v.heapUsedSlopeBytesPerMin;
    console.log(
      `${v.name.padEnd(6)} (${v.kind}/${v.backend}) rss slope ${(r.slope / 1024).toFixed(1)} ± ${(r.stderr / 1024).toFixed(1)} KiB/min, ` +
        `heapUsed slope ${(h.slope / 1024).toFixed(1)} ± ${(h.stderr / 1024).toFixed(1)} KiB/min, cpu x${v.cpuRatio.toFixed(3)}, requests ${String(v.requests)}, errors ${String(v.errors)}`,
    );
  }
  console.log(`wrote ${out}`);
}

await main();
