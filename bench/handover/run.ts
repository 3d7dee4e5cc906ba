// Cost of spanfuse's handover tracer per span start: a tracer handed out by
// spanfuse's delegate, forwarding to the app's provider after a handover, vs
// the app's SDK tracer used directly; interleaved rounds, medians.
// `node dist/bench/handover/run.js [spansPerRound] [rounds]`
import { ProxyTracerProvider } from '@opentelemetry/api';
import type { Tracer } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { HandoverTracerProvider } from '../../src/tracing/index.js';

const spans = Number(process.argv[2] ?? 200_000);
const rounds = Number(process.argv[3] ?? 7);

const proxy = new ProxyTracerProvider();
const delegate = new HandoverTracerProvider(new BasicTracerProvider(), proxy);
proxy.setDelegate(delegate);
const early = proxy.getTracer('bench'); // obtained while spanfuse serves
const app = new BasicTracerProvider();
const direct = app.getTracer('bench');
proxy.setDelegate(app);

function nsPerSpan(t: Tracer): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < spans; i++) t.startSpan('s').end();
  return Number(process.hrtime.bigint() - start) / spans;
}

const direct_: number[] = [];
const forwarded: number[] = [];
for (let r = 0; r < rounds; r++) {
  direct_.push(nsPerSpan(direct));
  forwarded.push(nsPerSpan(early));
}
const median = (a: number[]): number => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)] ?? NaN;
const d = median(direct_);
const f = median(forwarded);
console.log(
  `startSpan+end, median of ${rounds} interleaved rounds of ${spans}: app tracer ${d.toFixed(0)} ns, ` +
    `spanfuse handover tracer forwarding to it ${f.toFixed(0)} ns (x${(f / d).toFixed(3)})`,
);
