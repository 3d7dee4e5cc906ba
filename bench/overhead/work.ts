/**
 * The service's work: a fixed amount of CPU per request (iteration counts,
 * never "spin until N ms passed", which would hide a profiler's interrupt
 * cost), awaits on timers, fs and a promise fan-out, and a JSON response.
 *
 * Each request runs inside one of `UNIQUE_FUNCTIONS` generated functions with
 * distinct names (`req_0000` ... `req_4095`), picked round robin. A sample
 * whose stack holds `req_K` was taken while request K ran its own code, so
 * the stack is the ground truth for the attribution check; requests that run
 * at the same time have neighbouring sequence numbers and so different
 * functions.
 */
import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { setImmediate as tick, setTimeout as sleep } from 'node:timers/promises';

export const UNIQUE_FUNCTIONS = 4096;
export const UNIQUE_PREFIX = 'req_';

/** FNV-1a over a counter: integer work the JIT cannot fold away. */
export function cpuKernel(iterations: number): number {
  // `| 0` keeps the loop bound a small integer: with a double bound, Node 24's
  // optimising tier ran this loop ~3x slower than Node 20 (measured).
  const n = iterations | 0;
  // An int32 from the start too: as a double above 2^31 the first `^=` made
  // optimized code bail out ("lost precision"), and in some processes it kept
  // bailing out and re-optimizing (897 deopts in 150 s, measured with
  // --trace-deopt), so the same work cost a different CPU time per process.
  // `h ^= x` converts `h` to int32 anyway: the hash is the same.
  let h = 0x811c9dc5 | 0;
  for (let i = 0; i < n; i++) {
    h ^= i & 0xff;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Kernel iterations for about `ms` of CPU on this machine, measured once (a run of at least 20 ms). */
export function kernelIterationsFor(ms: number): number {
  let n = 20_000;
  for (;;) {
    const t0 = performance.now();
    cpuKernel(n);
    const dt = performance.now() - t0;
    if (dt > 20) return Math.max(1, Math.round((n * ms) / dt));
    n *= 2;
  }
}

/** One step of a route: CPU work in kernel iterations, or something to await. */
export type Step = number | (() => Promise<unknown>);

export interface Work {
  readonly steps: readonly Step[];
  readonly cpu: (iterations: number) => number;
  readonly done: (acc: number) => string;
}

export type UniqueFn = (w: Work) => Promise<string>;

/**
 * Generate the uniquely named request functions. Each is a tiny async
 * interpreter of its route's steps; it is called rarely (once per 4096
 * requests) so V8 keeps it as its own frame instead of inlining it, while the
 * shared kernel it calls gets optimised as in a real service.
 */
export function makeUniqueFunctions(): UniqueFn[] {
  const fns: UniqueFn[] = [];
  for (let k = 0; k < UNIQUE_FUNCTIONS; k++) {
    const name = uniqueName(k);
    // eslint-disable-next-line @typescript-eslint/no-implied-eval
    const factory = new Function(
      `return async function ${name}(w) {
        let acc = 0;
        for (const s of w.steps) {
          if (typeof s === 'number') acc = (acc + w.cpu(s)) | 0;
          else await s();
        }
        return w.done(acc);
      };`,
    ) as () => UniqueFn;
    fns.push(factory());
  }
  return fns;
}

export function uniqueName(k: number): string {
  return UNIQUE_PREFIX + String(k).padStart(4, '0');
}

/**
 * Index K of a frame named `req_K`, or -1. Some profilers decorate names
 * (@pyroscope/nodejs writes `file:name:line`), so `req_K` may stand between
 * colons.
 */
export function uniqueIndex(frameName: string): number {
  const m = UNIQUE_RE.exec(frameName);
  if (m === null) return -1;
  const n = Number(m[1]);
  return n < UNIQUE_FUNCTIONS ? n : -1;
}

const UNIQUE_RE = new RegExp(`(?:^|:)${UNIQUE_PREFIX}(\\d{4})(?::|$)`);

export interface Routes {
  readonly [path: string]: Work;
}

/**
 * The three routes. With the default unit (see run.ts) a `/json` request is
 * about 1.5 ms of CPU around one `await setImmediate`, like the reference
 * measurement in the issue.
 */
export function makeRoutes(unitIterations: number, dataFile: string, kernel: (iterations: number) => number = cpuKernel): Routes {
  // Steps hold whole iteration counts and `cpu` is the kernel itself, called
  // straight from the (unoptimised) unique function. A closure such as
  // `(units) => cpuKernel(units * k)` let Node 24's Maglev inline the loop and
  // never tier it up: the same work cost ~4x the CPU of Node 20 (measured),
  // which would have measured V8's tiering instead of the service.
  const it = (units: number): number => Math.max(1, Math.round(units * unitIterations));
  const cpu = kernel;
  const done = (acc: number): string => {
    const items = [];
    for (let i = 0; i < 16; i++) items.push({ id: i, hash: (acc ^ i) >>> 0, label: `item-${i}` });
    return JSON.stringify({ ok: true, acc, items });
  };
  const quarter = it(0.25);
  const fanChild = async (): Promise<number> => {
    await tick();
    return kernel(quarter);
  };
  return {
    '/json': { steps: [it(2), () => tick(), it(1)], cpu, done },
    // Issue 11's service: ~1.8 ms of fixed CPU around one `await setImmediate`
    // (5 units of ~0.36 ms at the default unit size on this kind of machine).
    '/issue11': { steps: [it(2.5), () => tick(), it(2.5)], cpu, done },
    '/async': { steps: [() => sleep(1), it(0.5), () => readFile(dataFile), it(0.5)], cpu, done },
    '/fanout': {
      steps: [it(0.5), () => Promise.all([fanChild(), fanChild(), fanChild(), fanChild()]), it(0.5)],
      cpu,
      done,
    },
  };
}

/** The request mix each load connection cycles through. */
export const REQUEST_MIX: readonly string[] = ['/json', '/async', '/json', '/fanout'];

/** The services `--service` picks from: the default mix, or issue 11's single route. */
export const SERVICE_MIXES = {
  default: REQUEST_MIX,
  issue11: ['/issue11'],
} as const satisfies Record<string, readonly string[]>;
export type ServiceName = keyof typeof SERVICE_MIXES;

/**
 * Ground truth, bounded: for each unique function, the last `SLOTS` span ids
 * that ran it, as 64-bit integers in one preallocated typed array (no
 * per-request allocation that could pass for a profiler's leak).
 */
export class GroundTruth {
  static readonly SLOTS = 32;
  readonly #ids = new BigUint64Array(UNIQUE_FUNCTIONS * GroundTruth.SLOTS);
  readonly #cursor = new Uint8Array(UNIQUE_FUNCTIONS);
  total = 0;

  record(k: number, spanId: bigint): void {
    const c = this.#cursor[k] ?? 0;
    this.#ids[k * GroundTruth.SLOTS + c] = spanId;
    this.#cursor[k] = (c + 1) % GroundTruth.SLOTS;
    this.total++;
  }

  get capacity(): number {
    return UNIQUE_FUNCTIONS * GroundTruth.SLOTS;
  }

  /** Span ids as 16 lowercase hex digits, per function name. */
  dump(): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (let k = 0; k < UNIQUE_FUNCTIONS; k++) {
      const ids: string[] = [];
      for (let s = 0; s < GroundTruth.SLOTS; s++) {
        const v = this.#ids[k * GroundTruth.SLOTS + s] ?? 0n;
        if (v !== 0n) ids.push(v.toString(16).padStart(16, '0'));
      }
      if (ids.length > 0) out[uniqueName(k)] = ids;
    }
    return out;
  }
}

/**
 * Measures the main thread's CPU inside the fixed work, so a report can tell
 * what a profiler costs outside it (everything else a request does) from how
 * fast this process ran the same fixed work. Between processes of one run the
 * kernel's CPU per request differs by up to ±3 % (seen with perf: the same
 * loop, other code placement or a busier host), which is as large as the
 * effects the overhead bench has to resolve.
 *
 * Every 8th call is timed with `clock`, the thread's CPU clock in ns (it must
 * be exact to the call: `process.threadCpuUsage` is not, it reads the
 * kernel's per-thread total as of the last tick and missed half the kernel's
 * time, measured); the estimate scales the timed calls' CPU by the share of
 * iterations they ran. The profiler's signal handler, when it interrupts the
 * kernel, is counted in it: at 100 Hz that is well under 0.1 % of the
 * kernel's time.
 */
export interface FixedWorkMeter {
  readonly kernel: (iterations: number) => number;
  reset(): void;
  /** The fixed work's CPU since `reset()`, µs. */
  estimateMicros(): number;
}

const TIME_EVERY = 8;

export function fixedWorkMeter(clock: () => number): FixedWorkMeter {
  let calls = 0;
  let iterations = 0;
  let timedIterations = 0;
  let timedNs = 0;
  const kernel = (n: number): number => {
    iterations += n;
    if (++calls % TIME_EVERY !== 0) return cpuKernel(n);
    const before = clock();
    const h = cpuKernel(n);
    timedNs += clock() - before;
    timedIterations += n;
    return h;
  };
  return {
    kernel,
    reset: () => {
      calls = iterations = timedIterations = timedNs = 0;
    },
    estimateMicros: () => (timedIterations > 0 ? (timedNs * iterations) / timedIterations / 1000 : Number.NaN),
  };
}
