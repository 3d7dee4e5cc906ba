import type { EnvSource } from './env.js';
import type { Problems } from './env.js';
import { envBool, envInt, envString } from './env.js';

/** Settings of the runtime stage (kernel/runtime signals per OS thread). */
export interface RuntimeConfig {
  /** Thread-state sampler (off-CPU profile, futex wait, run-queue delay). */
  readonly threadState: boolean;
  /** Threads it watches: 'app' = main, workers, libuv threadpool; 'all' adds V8/other threads. */
  readonly threadStateThreads: 'app' | 'all';
  /**
   * Its rate. Off-CPU totals come from schedstat and are exact at any rate;
   * the rate sets how finely wait *reasons* are resolved and the shortest span
   * that gets sampler-derived counters. Measured on a 2-vCPU Firecracker VM
   * (bench/threadstate): 5 Hz 0.22-0.29% of one core, 10 Hz 0.27-0.46%,
   * 20 Hz 0.55-0.75%, 50 Hz 1.0-1.7%; the cost is per wake-up.
   */
  readonly threadStateHz: number;
  /**
   * Visit a libuv threadpool thread (with threadStateThreads 'all', any
   * thread that runs no JavaScript) that was found waiting, and not
   * scheduled since, three passes in a row only every this many passes,
   * until it is seen scheduled again (1: every thread at every pass, the
   * behaviour up to 2026-12-06). At 10 Hz, 4 reads an idle one every
   * 400 ms. Its off-CPU time is still accounted in full, over the longer
   * interval; what is sampled less often is the reason of a wait that has
   * not changed. Each visit is a cold /proc read
   * on the thread running the passes (the main thread by default, where it
   * holds the event loop): in a service whose threadpool has no work, 4
   * skips three of its four threads' reads at most passes.
   */
  readonly threadStateIdleEvery: number;
  /**
   * Where its passes run. 'worker': a thread of its own (an extra isolate:
   * ~17 MB of RSS on Node 24, ~9 MB on Node 20), passes go on while the
   * event loop is blocked and every thread's wait reason is seen. 'main':
   * on the event loop (timer, plus an overdue pass at the next span boundary
   * or window read), no isolate; the main thread's own off-CPU time is still
   * measured but its reason is 'unobserved' and its futex time unknown.
   */
  readonly threadStateHost: 'worker' | 'main';
  /**
   * How span counters get context switches and page faults: 'sampler'
   * (default) uses the thread-state sampler's last /proc reading (~0.1-0.3 µs
   * per span, one-interval resolution); 'syscall' reads
   * getrusage(RUSAGE_THREAD) at span start and end (exact; needs koffi;
   * measured 4-7 µs per span here, 0.4-0.7% of a core at 1k spans/s).
   */
  readonly spanCounters: 'syscall' | 'sampler';
  /**
   * Hardware perf counters of the main thread (cycles, instructions, L3
   * misses) where a PMU exists, per window and per span. Off by default: a
   * perf event open on a thread adds kernel work to every switch of that
   * thread (perf's per-task context is switched out and in with it), which
   * an I/O-bound event loop does at every wake-up. Measured with software
   * events (no PMU here): one event on the main thread cost +8 to +9 µs per
   * `fs.promises.readFile` (~8 switches; x1.13 / x1.12 on Node 24 / 20),
   * and spanfuse's three cost 1.9 points of CPU per request in the HTTP
   * service below saturation (one connection, Node 24; within the noise
   * when saturated, where the loop rarely sleeps) (`bench/io`,
   * `bench/overhead`;
   * `bench/results/cost-2026-12-06T16Z.md`). Hardware events take the same
   * path plus the PMU's reprogramming. The window's CPU time, switches and
   * faults of the main thread come from its own counters instead
   * (getrusage), which cost nothing between reads.
   */
  readonly perfEvents: boolean;
  /** Publish the OTEP-4719 `OTEL_CTX` process context. */
  readonly processContext: boolean;
  /** Publish OTEP-4947 thread context records (AsyncContextFrame runtimes). */
  readonly threadContext: boolean;
  /** Give threads meaningful kernel names (libuv-worker, w<id>:<name>). */
  readonly nameThreads: boolean;
  /** libuv threadpool size (UV_THREADPOOL_SIZE), to find its threads. */
  readonly threadpoolSize: number;
}

export type RuntimeOptions = Partial<RuntimeConfig>;

export const RUNTIME_DEFAULTS: RuntimeConfig = {
  threadState: true,
  threadStateThreads: 'app',
  threadStateHz: 10,
  threadStateIdleEvery: 4,
  // On the event loop: no second V8 isolate (RSS over the OTel-traced
  // control under the bench/overhead load, interleaved: Node 24 +27.1 MB
  // against +40.1 MB with the worker host, Node 20 +33.2 against +41.2 MB;
  // CPU per request x1.089 / x1.048 against x1.116 / x1.070, spreads
  // overlapping; bench/results/overhead-custom-2026-12-04T17-11-40Z.md; a
  // pass costs 70-90 us of main-thread CPU, 10 a second). What it gives up: the main
  // thread cannot watch itself wait (its off-CPU time stays exact but its
  // reason shows as 'unobserved', its futex time unknown), and other
  // threads are not sampled while the loop is blocked (an overdue pass runs
  // at the next span boundary). 'worker' keeps both, one option away. The
  // 100-worker mass-terminate crash once blamed on this host was later seen
  // with the worker host too, and its suspected path closed (5e1b1fe).
  threadStateHost: 'main',
  spanCounters: 'sampler',
  perfEvents: false,
  processContext: true,
  // Off by default: a record per span and one more context frame per entry
  // cost ~3 µs per span (scratch micro-benchmark, Node 24); turn it on where
  // an eBPF profiler reads it.
  threadContext: false,
  nameThreads: true,
  threadpoolSize: 4,
};

const HZ = { min: 1, max: 250 };
const IDLE_EVERY = { min: 1, max: 100 };
const POOL = { min: 1, max: 1024 };

/** code > env > default; problems are collected, never thrown. */
export function parseRuntimeConfig(env: EnvSource, problems: Problems, options: RuntimeOptions = {}): RuntimeConfig {
  const bool = (
    key: 'threadState' | 'perfEvents' | 'processContext' | 'threadContext' | 'nameThreads',
    envName: string,
  ): boolean => {
    const code = options[key];
    if (code !== undefined) {
      if (typeof code === 'boolean') return code;
      problems.add(`runtime.${key}`, `expected true or false, got ${JSON.stringify(code)}`);
    }
    const fromEnv = envBool(env, envName, problems);
    return fromEnv ?? RUNTIME_DEFAULTS[key];
  };
  const int = (key: 'threadStateHz' | 'threadStateIdleEvery' | 'threadpoolSize', envName: string, bounds: { min: number; max: number }): number => {
    const code = options[key];
    if (code !== undefined) {
      if (Number.isInteger(code) && code >= bounds.min && code <= bounds.max) return code;
      problems.add(`runtime.${key}`, `expected a whole number from ${bounds.min} to ${bounds.max}, got ${JSON.stringify(code)}`);
    }
    return envInt(env, envName, problems, bounds) ?? RUNTIME_DEFAULTS[key];
  };
  return {
    threadState: bool('threadState', 'SPANFUSE_THREAD_STATE'),
    threadStateHz: int('threadStateHz', 'SPANFUSE_THREAD_STATE_HZ', HZ),
    threadStateIdleEvery: int('threadStateIdleEvery', 'SPANFUSE_THREAD_STATE_IDLE_EVERY', IDLE_EVERY),
    threadStateThreads: oneOf(env, problems, 'threadStateThreads', 'SPANFUSE_THREAD_STATE_THREADS', ['app', 'all'], options.threadStateThreads),
    threadStateHost: oneOf(env, problems, 'threadStateHost', 'SPANFUSE_THREAD_STATE_HOST', ['worker', 'main'], options.threadStateHost),
    spanCounters: oneOf(env, problems, 'spanCounters', 'SPANFUSE_SPAN_COUNTERS', ['syscall', 'sampler'], options.spanCounters),
    perfEvents: bool('perfEvents', 'SPANFUSE_PERF_EVENTS'),
    processContext: bool('processContext', 'SPANFUSE_PROCESS_CONTEXT'),
    threadContext: bool('threadContext', 'SPANFUSE_THREAD_CONTEXT'),
    nameThreads: bool('nameThreads', 'SPANFUSE_NAME_THREADS'),
    threadpoolSize: int('threadpoolSize', 'UV_THREADPOOL_SIZE', POOL),
  };
}

function oneOf<K extends 'threadStateThreads' | 'threadStateHost' | 'spanCounters'>(
  env: EnvSource,
  problems: Problems,
  key: K,
  envName: string,
  allowed: readonly RuntimeConfig[K][],
  code: unknown,
): RuntimeConfig[K] {
  const ok = (v: unknown): v is RuntimeConfig[K] => (allowed as readonly unknown[]).includes(v);
  if (code !== undefined) {
    if (ok(code)) return code;
    problems.add(`runtime.${key}`, `expected one of ${allowed.join(', ')}, got ${JSON.stringify(code)}`);
  }
  const v = envString(env, envName)?.toLowerCase();
  if (v === undefined) return RUNTIME_DEFAULTS[key];
  if (ok(v)) return v;
  problems.add(envName, `expected one of ${allowed.join(', ')}, got ${JSON.stringify(v)}`);
  return RUNTIME_DEFAULTS[key];
}
