// Cost of tail classification per span: query the p99, compare, add.
// LogSketch (src/exemplars/sketch.ts) vs @datadog/sketches-js DDSketch and
// its bounded LogCollapsingLowestDenseDDSketch, on the same latencies,
// interleaved rounds.
// Run:
//   npx tsc -p tsconfig.json --outDir .build/exemplars --tsBuildInfoFile .build/exemplars/.tsbuildinfo
//   node .build/exemplars/bench/spans/sketch.js [--rounds 7]
import { DDSketch, LogCollapsingLowestDenseDDSketch } from '@datadog/sketches-js';
import { LogSketch } from '../../src/exemplars/index.js';
import { gaussian, rng } from '../../test/exemplars/helpers.js';

const i = process.argv.indexOf('--rounds');
const ROUNDS = i > 0 ? Number(process.argv[i + 1]) : 7;
const N = 200_000;

// Span-like latencies: log-normal body around 2 ms, 0.5% outliers up to 2 s,
// some sub-microsecond spans (a range of about six decades).
const r = rng(11);
const xs = Array.from({ length: N }, () => {
  const u = r();
  if (u < 0.005) return 50 + 2000 * r();
  if (u < 0.05) return 0.0005 + 0.01 * r();
  return 2 * Math.exp(0.5 * gaussian(r));
});

interface Candidate {
  readonly name: string;
  run(): number;
  readonly ns: number[];
}

function candidate(name: string, make: () => { add(x: number): void; q(p: number): number; count(): number }): Candidate {
  return {
    name,
    ns: [],
    run() {
      const s = make();
      let tail = 0;
      const t = process.hrtime.bigint();
      for (const x of xs) {
        if (s.count() >= 100 && x > s.q(0.99)) tail++;
        s.add(x);
      }
      const ns = Number(process.hrtime.bigint() - t) / N;
      if (tail < 0) console.log(tail);
      return ns;
    },
  };
}

const cands = [
  candidate('LogSketch(0.01, 512) tracked p99', () => {
    const s = new LogSketch(0.01, 512, 0.99);
    return { add: (x) => s.add(x), q: () => s.trackedQuantile(), count: () => s.count };
  }),
  candidate('LogSketch(0.01, 512) block search', () => {
    const s = new LogSketch(0.01, 512);
    return { add: (x) => s.add(x), q: (p) => s.quantile(p), count: () => s.count };
  }),
  candidate('sketches-js DDSketch(0.01)', () => {
    const s = new DDSketch({ relativeAccuracy: 0.01 });
    return { add: (x) => s.accept(x), q: (p) => s.getValueAtQuantile(p), count: () => s.count };
  }),
  candidate('sketches-js LogCollapsingLowest(0.01, 512)', () => {
    const s = new LogCollapsingLowestDenseDDSketch({ relativeAccuracy: 0.01, binLimit: 512 });
    return { add: (x) => s.accept(x), q: (p) => s.getValueAtQuantile(p), count: () => s.count };
  }),
];

for (const c of cands) c.run(); // warm-up
for (let k = 0; k < ROUNDS; k++) {
  const order = k % 2 === 0 ? cands : [...cands].reverse();
  for (const c of order) c.ns.push(c.run());
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
console.log(`classify + add per span, ${N} spans, ${ROUNDS} rounds, node ${process.version}`);
const base = med(cands[0]!.ns);
for (const c of cands) console.log(`${c.name.padEnd(44)} median ${med(c.ns).toFixed(0)} ns  (x${(med(c.ns) / base).toFixed(1)})`);
