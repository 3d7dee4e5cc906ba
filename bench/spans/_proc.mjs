import * as api from '@opentelemetry/api';
import { BasicTracerProvider, NoopSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { SampleContextCache } from '../../dist/src/context/index.js';
import { LocalRootProcessor, JsonlSpanProcessor } from '../../dist/src/tracing/index.js';
import { TailSpanProcessor } from '../../dist/src/exemplars/index.js';
import { Diagnostics } from '../../dist/src/core/diagnostics.js';
import { ThreadWindowCounters } from '../../dist/src/runtime/span-counters.js';
const cm = new AsyncLocalStorageContextManager(); cm.enable(); api.context.setGlobalContextManager(cm);
const cache = new SampleContextCache();
const diag = new Diagnostics(() => {});
const counters = new ThreadWindowCounters({ tid: process.pid });
const mk = (name, procs) => ({ name, t: new BasicTracerProvider({ spanProcessors: procs() }).getTracer('x'), cpu: [] });
const jl = () => new JsonlSpanProcessor({ dir: '/tmp/cs-jl2', maxFileBytes: 1e8, diagnostics: diag });
const vs = [
  mk('none', () => []),
  mk('localroot', () => [new LocalRootProcessor(cache)]),
  mk('tail->noop', () => [new TailSpanProcessor({ downstream: new NoopSpanProcessor(), windowMs: 10000, currentProfileId: () => 'ab'.repeat(16), diagnostics: diag })]),
  mk('tail+counters', () => [new TailSpanProcessor({ downstream: new NoopSpanProcessor(), windowMs: 10000, currentProfileId: () => 'ab'.repeat(16), counters, diagnostics: diag })]),
  mk('jsonl', () => [jl()]),
  mk('all', () => [new LocalRootProcessor(cache), new TailSpanProcessor({ downstream: jl(), windowMs: 10000, currentProfileId: () => 'ab'.repeat(16), counters, diagnostics: diag })]),
];
async function run(v, n) { for (let i = 0; i < n; i++) { v.t.startActiveSpan('op', (s) => s.end()); if ((i & 255) === 255) await new Promise((r) => setImmediate(r)); } }
for (const v of vs) await run(v, 30000);
for (let r = 0; r < 9; r++) for (const v of (r % 2 ? [...vs].reverse() : vs)) { const c0 = process.cpuUsage(); await run(v, 30000); const c = process.cpuUsage(c0); v.cpu.push((c.user + c.system) * 1000 / 30000); }
const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const base = med(vs[0].cpu);
for (const v of vs) console.log(v.name.padEnd(14), med(v.cpu).toFixed(0), 'ns/span  +', (med(v.cpu) - base).toFixed(0));
