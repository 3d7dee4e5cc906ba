// Overhead of TailSpanProcessor on a span-heavy synthetic load.
// Control: BatchSpanProcessor (no-op exporter) alone. Tail: the same
// downstream wrapped in TailSpanProcessor (p99 per operation, 60
// operations, a window closing every 20,000 spans). Rounds interleave
// control and tail, alternating which goes first.
// Run:
//   npx tsc -p tsconfig.json --outDir .build/exemplars --tsBuildInfoFile .build/exemplars/.tsbuildinfo
//   node .build/exemplars/bench/spans/run.js [--rounds 9] [--spans 100000]
import { SpanKind } from '@opentelemetry/api';
import type { Tracer } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import type { ExportResult } from '@opentelemetry/core';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { TailSpanProcessor, tailSettings } from '../../src/exemplars/index.js';
import { fakeWindow } from '../../test/exemplars/helpers.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const ROUNDS = arg('rounds', 9);
const SPANS = arg('spans', 100_000);
const WINDOW_EVERY = 20_000;

class NoopExporter implements SpanExporter {
  exported = 0;
  export(spans: ReadableSpan[], done: (r: ExportResult) => void): void {
    this.exported += spans.length;
    done({ code: ExportResultCode.SUCCESS });
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

interface Variant {
  readonly name: string;
  readonly tracer: Tracer;
  readonly tail: TailSpanProcessor | undefined;
  readonly state: { id: number; sinceWindow: number };
  readonly samples: number[];
}

function variant(name: string, withTail: boolean): Variant {
  const batch = new BatchSpanProcessor(new NoopExporter(), { maxQueueSize: 65_536, maxExportBatchSize: 512, scheduledDelayMillis: 50 });
  const state = { id: 0, sinceWindow: 0 };
  const tail = withTail
    ? new TailSpanProcessor({
        downstream: batch,
        settings: tailSettings(),
        windowMs: 10_000,
        currentProfileId: () => state.id.toString(16).padStart(32, '0'),
      })
    : undefined;
  const provider = new BasicTracerProvider({ spanProcessors: [tail ?? batch] });
  return { name, tracer: provider.getTracer('bench'), tail, state, samples: [] };
}

const NAMES = Array.from({ length: 40 }, (_, i) => `GET /api/v1/resource${i}`);
const ROUTES = Array.from({ length: 40 }, (_, i) => `/api/v1/resource${i}/:id`);
const INTERNAL = Array.from({ length: 20 }, (_, i) => `db.query.${i}`);

/** One request-like pair: a SERVER span with a route and an INTERNAL child-like span. */
async function runSpans(v: Variant, n: number): Promise<number> {
  const start = process.hrtime.bigint();
  let x = 0;
  for (let i = 0; i < n; i += 2) {
    const k = i % 40;
    const server = v.tracer.startSpan(NAMES[k]!, { kind: SpanKind.SERVER, attributes: { 'http.route': ROUTES[k]! } });
    const db = v.tracer.startSpan(INTERNAL[i % 20]!);
    // A little work so durations vary like real ones.
    for (let j = 0; j < (i % 97 === 0 ? 400 : 20); j++) x += j;
    db.end();
    server.end();
    v.state.sinceWindow += 2;
    if (v.state.sinceWindow >= WINDOW_EVERY) {
      v.state.sinceWindow = 0;
      const id = v.state.id.toString(16).padStart(32, '0');
      v.state.id++;
      v.tail?.onWindowClosed(fakeWindow(id, 0n, 0n, []));
    }
    // Let the batch processor's exporter run, as it would in a service.
    if ((i & 2047) === 0) await new Promise((r) => setImmediate(r));
  }
  const ns = Number(process.hrtime.bigint() - start);
  if (x === -1) console.log(x);
  return ns / n;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

const control = variant('control (Batch only)', false);
const withTail = variant('TailSpanProcessor -> Batch', true);
// Warm-up: JIT, sketches past warm-up.
await runSpans(control, 40_000);
await runSpans(withTail, 40_000);
for (let r = 0; r < ROUNDS; r++) {
  const order = r % 2 === 0 ? [control, withTail] : [withTail, control];
  for (const v of order) v.samples.push(await runSpans(v, SPANS));
}
const c = median(control.samples);
const t = median(withTail.samples);
const ratios = control.samples.map((cv, i) => withTail.samples[i]! / cv);
console.log(`spans per round ${SPANS}, rounds ${ROUNDS}, node ${process.version}`);
for (const v of [control, withTail]) {
  const m = median(v.samples);
  console.log(`${v.name.padEnd(28)} median ${m.toFixed(0)} ns/span  (${(1e9 / m / 1000).toFixed(0)}k spans/s)  rounds: ${v.samples.map((s) => s.toFixed(0)).join(' ')}`);
}
console.log(`overhead ${(t - c).toFixed(0)} ns/span; ratio of medians ${(t / c).toFixed(3)}; median per-round ratio ${median(ratios).toFixed(3)}`);
const st = withTail.tail!.stats();
console.log(
  `tail stats: spans ${st.spans}, tail ${st.tailSpans} (${((100 * st.tailSpans) / st.spans).toFixed(2)}%), held ${st.held}, hold full ${st.holdFull}, operations ${st.operations}`,
);
