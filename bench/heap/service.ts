/**
 * The service under load for the heap benchmarks, run as a child process.
 * Env: HEAP_MODE = off | inuse | alloc; HEAP_INTERVAL_BYTES; WINDOW_MS (how
 * often the heap profile is collected and gzip-encoded, as the pipeline does).
 * Talks to the parent over IPC: sends {port} when listening, answers 'stats'
 * with memory and CPU figures.
 */
import { createServer } from 'node:http';
import { PerformanceObserver } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { gzip as gzipCb } from 'node:zlib';
import { Diagnostics } from '../../src/core/index.js';
import { startHeapSampler } from '../../src/heap/index.js';
import type { HeapSampler } from '../../src/heap/index.js';

const gzip = promisify(gzipCb);
const mode = process.env['HEAP_MODE'] ?? 'off';
const intervalBytes = Number(process.env['HEAP_INTERVAL_BYTES'] ?? 512 * 1024);
const windowMs = Number(process.env['WINDOW_MS'] ?? 10_000);
const diagnostics = new Diagnostics(() => undefined);

let sampler: HeapSampler | undefined;
if (mode === 'session' || mode === 'raw-live' || mode === 'raw-alloc') {
  // Diagnostic variants: an in-process inspector session alone, or raw
  // inspector sampling (without / with collected objects, never collected),
  // to tell the session's cost from the sampler's and from spanfuse's code.
  const inspector = await import('node:inspector');
  const session = new inspector.Session();
  session.connect();
  if (mode !== 'session') {
    const collected = mode === 'raw-alloc';
    session.post('HeapProfiler.startSampling', {
      samplingInterval: intervalBytes,
      includeObjectsCollectedByMajorGC: collected,
      includeObjectsCollectedByMinorGC: collected,
    } as object);
  }
} else if (mode !== 'off') {
  sampler = startHeapSampler({ intervalBytes, stackDepth: 64, allocations: mode === 'alloc' }, diagnostics);
  if (sampler === undefined) throw new Error(`heap sampler did not start: ${JSON.stringify(diagnostics.counters())}`);
}

// GC count and pause time, the same observer in every variant.
let gcCount = 0;
let gcMs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gcCount++;
    gcMs += e.duration;
  }
}).observe({ entryTypes: ['gc'] });

let windows = 0;
let encodedBytes = 0;
if (sampler !== undefined) {
  const s = sampler;
  setInterval(() => {
    const profile = s.collect();
    if (profile === undefined) return;
    windows++;
    void profile
      .encodeAsync()
      .then((raw) => gzip(raw))
      .then((buf) => {
        encodedBytes = buf.length;
      });
  }, windowMs).unref();
}

// A bounded cache gives the service a steady live heap, like a real one.
const cache = new Map<number, { id: number; tags: string[]; payload: string }>();
const CACHE_MAX = 2000;
let seq = 0;

function handleOrders(n: number): string {
  const items = [];
  for (let i = 0; i < n; i++) {
    items.push({ id: i, sku: `sku-${i % 97}`, qty: (i * 7) % 13, price: i * 1.25, tags: ['a', 'b', String(i % 5)] });
  }
  const id = seq++;
  cache.set(id, { id, tags: items.slice(0, 3).map((x) => x.sku), payload: JSON.stringify(items.slice(0, 5)) });
  if (cache.size > CACHE_MAX) {
    const oldest = cache.keys().next().value;
    if (oldest !== undefined) cache.delete(oldest);
  }
  const body = JSON.stringify({ count: items.length, total: items.reduce((a, x) => a + x.price * x.qty, 0) });
  return body;
}

const server = createServer((req, res) => {
  const body = handleOrders(req.url === '/big' ? 2000 : 200);
  res.setHeader('content-type', 'application/json');
  res.end(body);
});

server.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  if (addr === null || typeof addr === 'string') throw new Error('no port');
  process.send?.({ type: 'ready', port: addr.port, kind: sampler?.kind ?? 'off', backend: sampler?.backend ?? 'none' });
});

process.on('message', (msg: { type: string }) => {
  if (msg.type === 'stats') {
    const mem = process.memoryUsage();
    const cpu = process.cpuUsage();
    process.send?.({
      type: 'stats',
      rss: mem.rss,
      heapUsed: mem.heapUsed,
      heapTotal: mem.heapTotal,
      external: mem.external,
      cpuMicros: cpu.user + cpu.system,
      windows,
      encodedBytes,
      gcCount,
      gcMs,
      diagnostics: diagnostics.counters(),
    });
  } else if (msg.type === 'exit') {
    sampler?.stop();
    server.close();
    process.exit(0);
  }
});
