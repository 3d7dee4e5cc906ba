// Synthetic spanfuse-like window files for size tests and the render
// benchmark: `windows` gzip pprof files holding `samples` samples in all,
// over stacks drawn from a pool of functions (deterministic PRNG), with span
// labels; one span in ten is labelled as a tail span of "GET /big (SERVER)".
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Function as PFunction, Label, Line, Location, Profile, Sample, StringTable, ValueType } from '../../src/core/pprof.js';
import { windowFileName } from '../../src/export/index.js';
import { encodePprofSync } from '../../src/profile/index.js';

/**
 * `branching`: how many callees a frame picks from (2 gives stacks that share
 * most of their paths, as a service's do; 6 makes nearly every sample's
 * path unique: a worst case of about 10 tree nodes per sample).
 */
export function writeSyntheticWindows(dir: string, opts: { windows: number; samples: number; functions?: number; seed?: number; branching?: number }): string[] {
  mkdirSync(dir, { recursive: true });
  let seed = opts.seed ?? 12345;
  const rand = (): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 4294967296;
  };
  const nFn = opts.functions ?? 3000;
  const branching = opts.branching ?? 2;
  const files: string[] = [];
  const perWindow = Math.ceil(opts.samples / opts.windows);
  const t0 = BigInt(Date.UTC(2026, 0, 1)) * 1_000_000n;
  for (let w = 0; w < opts.windows; w++) {
    const strings = new StringTable();
    const functions: PFunction[] = [];
    const locations: Location[] = [];
    for (let f = 1; f <= nFn; f++) {
      functions.push(new PFunction({ id: f, name: strings.dedup(`fn_${f}`), systemName: strings.dedup(`fn_${f}`), filename: strings.dedup(`src/mod_${f % 97}.js`) }));
      locations.push(new Location({ id: f, line: [new Line({ functionId: f, line: f % 300 })] }));
    }
    const k = {
      span: strings.dedup('span_id'),
      trace: strings.dedup('trace_id'),
      name: strings.dedup('span_name'),
      op: strings.dedup('profiler.tail.operation'),
      q: strings.dedup('profiler.tail.quantile'),
      ts: strings.dedup('end_timestamp_ns'),
    };
    const start = t0 + BigInt(w) * 10_000_000_000n;
    const samples: Sample[] = [];
    for (let s = 0; s < perWindow; s++) {
      // Stacks share prefixes: a few roots, then a random walk down the pool.
      const depth = 8 + Math.floor(rand() * 20);
      const stack: number[] = [];
      let fn = 1 + Math.floor(rand() * 8);
      for (let d = 0; d < depth; d++) {
        stack.push(fn);
        fn = 1 + ((fn * 31 + Math.floor(rand() * rand() * branching)) % nFn);
      }
      stack.reverse(); // leaf first
      const spanNo = Math.floor(rand() * 400);
      const spanId = (0x1000000000000000n + BigInt(w * 1000 + spanNo)).toString(16);
      const labels = [
        new Label({ key: k.span, str: strings.dedup(spanId) }),
        new Label({ key: k.trace, str: strings.dedup(spanId.padStart(32, '0')) }),
        new Label({ key: k.name, str: strings.dedup('GET /big') }),
        new Label({ key: k.ts, num: start + BigInt(s) * 100_000n }),
      ];
      if (spanNo % 10 === 0) labels.push(new Label({ key: k.op, str: strings.dedup('GET /big (SERVER)') }), new Label({ key: k.q, str: strings.dedup('p99') }));
      samples.push(new Sample({ locationId: stack, value: [1, 10_000_000, Math.floor(rand() * 10_000_000)], label: labels }));
    }
    const p = new Profile({
      sampleType: [
        new ValueType({ type: strings.dedup('sample'), unit: strings.dedup('count') }),
        new ValueType({ type: strings.dedup('wall'), unit: strings.dedup('nanoseconds') }),
        new ValueType({ type: strings.dedup('cpu'), unit: strings.dedup('nanoseconds') }),
      ],
      sample: samples,
      location: locations,
      function: functions,
      stringTable: strings,
      timeNanos: start,
      durationNanos: 10_000_000_000n,
      periodType: new ValueType({ type: strings.dedup('wall'), unit: strings.dedup('nanoseconds') }),
      period: 10_000_000,
    });
    const id = (BigInt(w) + 0xabc00000000000000000000000000000n).toString(16);
    const file = join(dir, windowFileName(start, id, 'wall'));
    writeFileSync(file, gzipSync(encodePprofSync(p)));
    files.push(file);
  }
  return files;
}
