import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { toJson, toLine } from '../../dist/src/tracing/jsonl-processor.js';
import { hrTimeToNanoString } from '../../dist/src/tracing/time.js';
const ex = new InMemorySpanExporter();
const p = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(ex)] });
const t = p.getTracer('x');
for (let i = 0; i < 3000; i++) t.startSpan('op', { attributes: i % 2 ? { 'http.route': '/a/:id' } : {} }).end();
const spans = ex.getFinishedSpans();
function viaObj(s) { const sc = s.spanContext(); return JSON.stringify({ traceId: sc.traceId, spanId: sc.spanId, parentSpanId: s.parentSpanContext?.spanId, name: s.name, kind: s.kind, startTimeUnixNano: hrTimeToNanoString(s.startTime), endTimeUnixNano: hrTimeToNanoString(s.endTime), attributes: s.attributes, status: s.status.message === undefined ? { code: s.status.code } : { code: s.status.code, message: s.status.message } }) + '\n'; }
const fns = { toLine, viaObj, orig: (s) => JSON.stringify(toJson(s)) + '\n' };
for (const k of Object.keys(fns)) for (let i = 0; i < 3; i++) { const parts = []; for (const s of spans) parts.push(fns[k](s)); parts.join(''); }
for (let r = 0; r < 3; r++) for (const [k, f] of Object.entries(fns)) {
  const t0 = process.hrtime.bigint(); let n = 0;
  for (let rep = 0; rep < 20; rep++) { const parts = []; for (const s of spans) parts.push(f(s)); n += parts.join('').length; }
  console.log(k.padEnd(8), (Number(process.hrtime.bigint() - t0) / (20 * spans.length)).toFixed(0), 'ns/span incl. join', n);
}
