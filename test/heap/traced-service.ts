/**
 * A real node:http service with two routes, each request in an OTel span,
 * profiled by the wall sampler with span labels (the spine's context binding
 * and WallSampler) and by the heap sampler. `/heavy` allocates about ten times
 * what `/light` does, through the same helper, before and after an await.
 */
import { createServer, get } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setImmediate as immediate } from 'node:timers/promises';
import { context, trace } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import {
  detectContextMode,
  FrameBinder,
  HookBinder,
  SpanfuseContextManager,
} from '../../src/context/index.js';
import type { SamplerBinder } from '../../src/context/index.js';
import { WallSampler } from '../../src/sampler/index.js';
import type { Profile, WindowProfile } from '../../src/core/index.js';

export const HEAVY_OP = 'GET /heavy';
export const LIGHT_OP = 'GET /light';

// Shared by both routes: the frame alone cannot tell them apart.
function buildRecords(n: number): { id: number; name: string; tags: number[] }[] {
  const out = [];
  for (let i = 0; i < n; i++) out.push({ id: i, name: `record-${i}`, tags: [i, i * 2, i * 3] });
  return out;
}

function checksum(rows: { id: number; name: string }[]): number {
  let x = 0;
  for (const r of rows) x = (x + r.id + r.name.length) % 1000003;
  return x;
}

export async function heavyRoute(): Promise<number> {
  const a = checksum(buildRecords(10_000));
  await immediate();
  return a + checksum(buildRecords(10_000));
}

export async function lightRoute(): Promise<number> {
  const a = checksum(buildRecords(1_000));
  await immediate();
  return a + checksum(buildRecords(1_000));
}

/** Both routes through one function, differing only in size: identical stacks. */
export async function sharedRoute(n: number): Promise<number> {
  const a = checksum(buildRecords(n));
  await immediate();
  return a + checksum(buildRecords(n));
}

export interface TracedService {
  readonly port: number;
  /** Make `n` requests to each route, interleaved, `concurrency` at a time. */
  drive(n: number, concurrency: number): Promise<void>;
  /** Close the wall window: the wall profile with span labels. */
  wallProfile(): Profile;
  /** Close the wall window as the pipeline sees it. */
  rotate(): WindowProfile;
  close(): Promise<void>;
}

/**
 * `sharedPath`: both routes run `sharedRoute` (10_000 vs 1_000 records), so
 * their allocation stacks are identical and only time tells them apart.
 */
export async function startTracedService(samplingIntervalMicros: number, sharedPath = false): Promise<TracedService> {
  const manager = new SpanfuseContextManager();
  const mode = detectContextMode();
  const binder: SamplerBinder =
    mode === 'async-context-frame' ? new FrameBinder() : new HookBinder(() => manager.activeSample());
  manager.enable();
  context.setGlobalContextManager(manager);
  const provider = new BasicTracerProvider();
  trace.setGlobalTracerProvider(provider);
  const tracer = trace.getTracer('heap-test');
  const sampler = new WallSampler({
    samplingIntervalMicros,
    collectCpuTime: false,
    mode,
    thread: { tid: process.pid, name: 'main' },
  });
  sampler.start();
  manager.setBinder(binder);
  binder.enable();

  const server: Server = createServer((req, res) => {
    const heavy = req.url === '/heavy';
    void tracer.startActiveSpan(heavy ? HEAVY_OP : LIGHT_OP, async (span) => {
      const n = sharedPath
        ? await sharedRoute(heavy ? 10_000 : 1_000)
        : heavy
          ? await heavyRoute()
          : await lightRoute();
      span.end();
      res.end(String(n));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;

  const request = (path: string): Promise<void> =>
    new Promise((resolve, reject) => {
      get({ host: '127.0.0.1', port, path }, (res) => {
        res.resume();
        res.on('end', resolve);
      }).on('error', reject);
    });

  const rotate = (): WindowProfile => {
    const w = sampler.rotate(true);
    if (w === undefined) throw new Error('wall sampler not running');
    return w;
  };

  return {
    port,
    async drive(n, concurrency) {
      const paths: string[] = [];
      for (let i = 0; i < n; i++) paths.push('/heavy', '/light');
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < paths.length) {
          const p = paths[next++];
          if (p !== undefined) await request(p);
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
    },
    wallProfile: () => rotate().wall,
    rotate,
    async close() {
      binder.disable();
      manager.setBinder(undefined);
      sampler.rotate(false);
      await new Promise<void>((r) => server.close(() => r()));
      await provider.shutdown();
      context.disable();
      trace.disable();
    },
  };
}
