// What the OTEP-4947 thread context's writer costs per call, alone: the
// parts spanfuse pays per span (a record made at the span's first entry,
// entered with its own AsyncLocalStorage, invalidated at the span's end),
// next to a plain AsyncLocalStorage.run. Needs AsyncContextFrame (Node 24)
// and Linux, as the writer does.
//
//   node_modules/node/bin/node dist/bench/spans/thread-context-parts.js [--calls N]
import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire } from 'node:module';
import { option } from '../args.js';

interface Record {
  run<T>(fn: () => T): T;
  invalidate(): void;
}
interface Writer {
  ThreadContext: new (traceId: Uint8Array, spanId: Uint8Array, flags?: number, attributes?: string[]) => Record;
}

const calls = Number(option(process.argv.slice(2), '--calls', '200000'));
const writer = createRequire(import.meta.url)('@datadog/pprof/out/src/otel-thread-ctx.js') as Writer;
const traceId = new Uint8Array(16).fill(7);
const spanId = new Uint8Array(8).fill(3);
const attributes = ['GET /users/:id', '0123456789abcdef'];
const fn = (): number => 1;

function time(name: string, f: () => void): void {
  for (let i = 0; i < calls / 10; i++) f();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) f();
  const ns = Number(process.hrtime.bigint() - t0) / calls;
  console.log(`${name.padEnd(34)} ${ns.toFixed(0).padStart(6)} ns`);
}

console.log(`node ${process.version}, ${calls} calls each after ${calls / 10} warm-up calls`);
const record = new writer.ThreadContext(traceId, spanId, 1, attributes);
const als = new AsyncLocalStorage<unknown>();
time('construct (ids + 2 attributes)', () => void new writer.ThreadContext(traceId, spanId, 1, attributes));
time('construct (ids only)', () => void new writer.ThreadContext(traceId, spanId, 1));
time('run(fn)', () => void record.run(fn));
time('plain AsyncLocalStorage.run', () => void als.run(record, fn));
time('construct + run + invalidate', () => {
  const r = new writer.ThreadContext(traceId, spanId, 1, attributes);
  r.run(fn);
  r.invalidate();
});
