import * as api from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { time } from '@datadog/pprof';
const mode = process.argv[2];
if (mode.includes('prof')) time.start({ intervalMicros: 10000, withContexts: true, useCPED: true, collectCpuTime: true, workaroundV8Bug: true, lineNumbers: false });
const cm = new AsyncLocalStorageContextManager();
if (mode.includes('rwc')) {
  const orig = cm.with.bind(cm);
  cm.with = (ctx, fn, thisArg, ...args) => time.runWithContext({}, () => orig(ctx, fn, thisArg, ...args));
}
cm.enable(); api.context.setGlobalContextManager(cm);
api.trace.setGlobalTracerProvider(new BasicTracerProvider());
const tracer = api.trace.getTracer('x');
const one = () => tracer.startActiveSpan('op', async (span) => { await Promise.resolve(); span.end(); });
async function run(n) { for (let i = 0; i < n; i++) { await one(); if ((i & 63) === 63) await new Promise((r) => setImmediate(r)); } }
await run(40000);
const t0 = process.hrtime.bigint(); await run(100000); const t1 = process.hrtime.bigint();
console.log(mode, (Number(t1 - t0) / 100000).toFixed(0), 'ns/span');
if (time.isStarted()) time.stop();
