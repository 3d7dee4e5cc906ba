import * as api from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { JsonlSpanProcessor } from '../../dist/src/tracing/index.js';
import { Diagnostics } from '../../dist/src/core/diagnostics.js';
const j = new JsonlSpanProcessor({ dir: '/tmp/cs-jl3', maxFileBytes: 1e8, diagnostics: new Diagnostics(() => {}) });
const t = new BasicTracerProvider({ spanProcessors: process.argv[2] === 'j' ? [j] : [] }).getTracer('x');
async function run(n) { for (let i = 0; i < n; i++) { t.startSpan('op').end(); if ((i & 255) === 255) await new Promise((r) => setImmediate(r)); } }
await run(50000);
const c0 = process.cpuUsage(); const t0 = performance.now(); await run(300000); const c = process.cpuUsage(c0);
console.log(process.argv[2], ((c.user + c.system) * 1000 / 300000).toFixed(0), 'cpu ns/span', (c.system*1000/300000).toFixed(0), 'sys ns/span', ((performance.now() - t0) * 1e6 / 300000).toFixed(0), 'wall', j.stats());
