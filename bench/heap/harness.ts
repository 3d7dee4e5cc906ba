/** Shared parts of the heap benchmarks: service child processes, load, statistics. */
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';

export interface ServiceStats {
  readonly rss: number;
  readonly heapUsed: number;
  readonly heapTotal: number;
  readonly external: number;
  readonly cpuMicros: number;
  readonly windows: number;
  readonly encodedBytes: number;
  readonly gcCount: number;
  readonly gcMs: number;
  readonly diagnostics: Record<string, number>;
}

export interface Variant {
  readonly name: string;
  readonly mode: 'off' | 'inuse' | 'alloc' | 'session' | 'raw-live' | 'raw-alloc';
  readonly intervalBytes: number;
}

export interface Service {
  readonly variant: Variant;
  readonly port: number;
  readonly kind: string;
  readonly backend: string;
  readonly agent: Agent;
  stats(): Promise<ServiceStats>;
  close(): Promise<void>;
}

const servicePath = fileURLToPath(new URL('./service.js', import.meta.url));

export async function startService(variant: Variant, windowMs: number, execPath = process.execPath): Promise<Service> {
  const child: ChildProcess = fork(servicePath, [], {
    execPath,
    env: {
      ...process.env,
      HEAP_MODE: variant.mode,
      HEAP_INTERVAL_BYTES: String(variant.intervalBytes),
      WINDOW_MS: String(windowMs),
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await new Promise<{ port: number; kind: string; backend: string }>((resolve, reject) => {
    child.once('message', (m) => {
      resolve(m as { port: number; kind: string; backend: string });
    });
    child.once('exit', (code) => {
      reject(new Error(`service ${variant.name} exited with ${String(code)}`));
    });
  });
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  return {
    variant,
    port: ready.port,
    kind: ready.kind,
    backend: ready.backend,
    agent,
    stats: () =>
      new Promise<ServiceStats>((resolve) => {
        const onMessage = (m: unknown): void => {
          const msg = m as ServiceStats & { type: string };
          if (msg.type !== 'stats') return;
          child.off('message', onMessage);
          resolve(msg);
        };
        child.on('message', onMessage);
        child.send({ type: 'stats' });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        child.once('exit', () => {
          resolve();
        });
        child.send({ type: 'exit' });
      }),
  };
}

function get(service: Service, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: service.port, path, agent: service.agent }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', reject);
    req.end();
  });
}

const pathFor = (i: number): string => (i % 10 === 0 ? '/big' : '/');

/** As many requests as `concurrency` loops can make in `durationMs`; returns the count. */
export async function closedLoad(service: Service, concurrency: number, durationMs: number): Promise<number> {
  const end = Date.now() + durationMs;
  let done = 0;
  const loop = async (): Promise<void> => {
    while (Date.now() < end) {
      await get(service, pathFor(done));
      done++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  return done;
}

/**
 * A steady open-loop load: `ratePerSec` requests a second until `stop()`.
 * Errors are counted, not thrown (a soak must keep going).
 */
export function steadyLoad(service: Service, ratePerSec: number): { stop(): { sent: number; errors: number } } {
  let sent = 0;
  let errors = 0;
  const tickMs = 50;
  const perTick = ratePerSec / (1000 / tickMs);
  let credit = 0;
  const timer = setInterval(() => {
    credit += perTick;
    while (credit >= 1) {
      credit -= 1;
      sent++;
      get(service, pathFor(sent)).catch(() => {
        errors++;
      });
    }
  }, tickMs);
  return {
    stop: () => {
      clearInterval(timer);
      return { sent, errors };
    },
  };
}

/** Least-squares slope of y over x, and the standard error of that slope. */
export function linearSlope(xs: readonly number[], ys: readonly number[]): { slope: number; stderr: number } {
  const n = Math.min(xs.length, ys.length);
  if (n < 3) return { slope: Number.NaN, stderr: Number.NaN };
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx += xs[i] ?? 0;
    my += ys[i] ?? 0;
  }
  mx /= n;
  my /= n;
  let sxx = 0;
  let sxy = 0;
  for (let i = 0; i < n; i++) {
    const dx = (xs[i] ?? 0) - mx;
    sxx += dx * dx;
    sxy += dx * ((ys[i] ?? 0) - my);
  }
  const slope = sxy / sxx;
  const intercept = my - slope * mx;
  let sse = 0;
  for (let i = 0; i < n; i++) {
    const r = (ys[i] ?? 0) - (intercept + slope * (xs[i] ?? 0));
    sse += r * r;
  }
  return { slope, stderr: Math.sqrt(sse / (n - 2) / sxx) };
}

export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[m] ?? Number.NaN) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
}

export function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? process.argv[i + 1] : undefined;
  return v ?? fallback;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
