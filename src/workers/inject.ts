import { createRequire, syncBuiltinESMExports } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Worker as WorkerType, WorkerOptions } from 'node:worker_threads';
import { REQUIRE_ESM } from '../core/require-esm.js';
import { markPreloading, preloadState, waitPreloadedSync } from './registry.js';
import { PRELOAD_WAIT_MS } from './terminate-hook.js';

const INJECTED = Symbol.for('spanfuse.worker.inject');

/**
 * Start every worker with the preload as `--require <register.js>`:
 * - eval workers (`new Worker(code, { eval: true })`): Node runs `--require`
 *   preloads in them but not `--import` ones;
 * - workers given their own `execArgv` without spanfuse get it added;
 * - workers inheriting `--import spanfuse/register` get it as `--require`
 *   instead: require(esm) loads the preload's module graph synchronously,
 *   while `--import` reads each file through fs/promises, and on Node 20 a
 *   worker terminated during such a read aborts the whole process
 *   (`Assertion failed: (req_wrap_async) != nullptr`).
 * spanfuse's own helper threads (`workerData.spanfuseInternal`) and workers
 * whose `env` sets SPANFUSE_ENABLED=false are left alone. When Node rejects
 * the amended options (a flag not allowed in workers), the worker starts
 * with the caller's own options.
 *
 * Done by replacing `worker_threads.Worker` (CommonJS and ESM bindings) with a
 * Proxy that only edits the options: prototype, statics and `instanceof` stay.
 * Main thread, from the preload, before the app imports worker_threads.
 */
export function injectPreloadIntoWorkers(registerUrl: string): boolean {
  try {
    const wt = createRequire(import.meta.url)('node:worker_threads') as { Worker: typeof import('node:worker_threads').Worker & { [INJECTED]?: true } };
    if (wt.Worker[INJECTED]) return true;
    const original = wt.Worker;
    const registerPath = fileURLToPath(registerUrl);
    const proxy = new Proxy(original, {
      construct(target, args: unknown[], newTarget: (...a: unknown[]) => object) {
        const { amended, preloads } = amend(args, registerPath);
        let worker: WorkerType;
        try {
          worker = Reflect.construct(target, amended ?? args, newTarget) as WorkerType;
        } catch (err) {
          if (amended === undefined) throw err;
          // e.g. ERR_WORKER_INVALID_EXEC_ARGV: the caller's options as given (unprofiled)
          return Reflect.construct(target, args, newTarget) as WorkerType;
        }
        return preloads ? preloading(worker) : worker;
      },
      get(target, key, receiver) {
        if (key === INJECTED) return true;
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    wt.Worker = proxy;
    syncBuiltinESMExports();
    return true;
  } catch {
    return false;
  }
}

function isSpanfuse(arg: string | undefined, registerPath: string): boolean {
  return arg !== undefined && (arg.includes('spanfuse/register') || arg.includes(registerPath));
}

/** `argv` without spanfuse preloads; whether it had a `--require` one. */
function withoutSpanfuse(argv: readonly string[], registerPath: string): { rest: string[]; required: boolean } {
  const rest: string[] = [];
  let required = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? '';
    const eq = /^(--import|--require|-r)=(.*)$/.exec(a);
    if (eq && isSpanfuse(eq[2], registerPath)) {
      required ||= eq[1] !== '--import';
      continue;
    }
    if ((a === '--import' || a === '--require' || a === '-r') && isSpanfuse(argv[i + 1], registerPath)) {
      required ||= a !== '--import';
      i++;
      continue;
    }
    rest.push(a);
  }
  return { rest, required };
}

/**
 * Node 20 aborts the process when a worker is terminated while require()
 * instantiates an ES module graph (ModuleWrap::InstantiateSync calls
 * IsGraphAsync on the uninstantiated module); Node 24 does not (the churn
 * test and bench pass there without the wait). Node 22 is not tested here:
 * it waits too.
 */
const TERMINATE_IN_LOAD_ABORTS = Number(process.versions.node.split('.')[0]) < 24;

/**
 * Longest the process's exit waits for workers still loading the preload
 * (ms, all of them together): {@link EXIT_PRELOAD_WAIT_BASE_MS} plus
 * {@link EXIT_PRELOAD_WAIT_PER_WORKER_MS} for each worker loading then, at
 * most {@link PRELOAD_WAIT_MS}. Loading takes ~0.3 s of one core per worker,
 * and workers started together share the cores, so they all finish near the
 * end: 20 started at once on 2 quiet cores need 4.2-4.8 s (measured), more
 * beside other work; a fixed 5 s bound passed with some of them still loading.
 */
export const EXIT_PRELOAD_WAIT_BASE_MS = 5000;
export const EXIT_PRELOAD_WAIT_PER_WORKER_MS = 250;

/** The exit's preload wait for `loading` workers (see {@link EXIT_PRELOAD_WAIT_BASE_MS}). */
function exitPreloadWaitMs(loading: number): number {
  return Math.min(PRELOAD_WAIT_MS, EXIT_PRELOAD_WAIT_BASE_MS + EXIT_PRELOAD_WAIT_PER_WORKER_MS * loading);
}

/** Workers created with the preload whose 'exit' has not been seen yet (Node < 24). */
const started = new Set<number>();

/**
 * The process is exiting (main thread's `exit` event): Node terminates every
 * worker right after its listeners, which on Node 20 aborts the process when
 * a worker is instantiating the preload's modules (~1 exit in 10 with 20
 * workers starting, measured). Let those finish loading first, bounded.
 */
function beforeWorkersStop(): void {
  try {
    let loading = 0;
    for (const id of started) if (preloadState(id) === 'loading') loading++;
    if (loading > 0) waitPreloadedSync(started, performance.now() + exitPreloadWaitMs(loading));
  } catch {
    // nothing to wait with: exit as before
  }
}

/**
 * A worker that loads the preload: its terminate(), and the process's exit,
 * let the loading finish first (terminate-hook.ts, {@link beforeWorkersStop}).
 */
function preloading(worker: WorkerType): WorkerType {
  if (!TERMINATE_IN_LOAD_ABORTS) return worker;
  const id = worker.threadId;
  markPreloading(id);
  if (started.size === 0) process.on('exit', beforeWorkersStop);
  started.add(id);
  worker.once('exit', () => {
    started.delete(id);
    if (started.size === 0) process.off('exit', beforeWorkersStop);
  });
  return worker;
}

/**
 * Amended constructor arguments (undefined when the worker needs nothing),
 * and whether the worker made from them (or from `args` as given: an
 * inherited `--require`) loads the preload synchronously. Without
 * require(esm) the amendment only leaves the preload out.
 */
function amend(args: unknown[], registerPath: string): { amended: unknown[] | undefined; preloads: boolean } {
  const none = { amended: undefined, preloads: false };
  const [filename, raw] = args;
  const options = (raw ?? {}) as WorkerOptions & { workerData?: { spanfuseInternal?: unknown } };
  if (typeof options !== 'object') return none;
  if ((options.workerData as { spanfuseInternal?: unknown } | undefined)?.spanfuseInternal === true) return none;
  const env = options.env as Record<string, string | undefined> | undefined;
  if (env !== undefined && typeof env === 'object' && /^(false|0|no|off)$/i.test(env.SPANFUSE_ENABLED ?? '')) return none;
  const argv = options.execArgv ?? process.execArgv;
  const { rest, required } = withoutSpanfuse(argv, registerPath);
  if (!REQUIRE_ESM) {
    // The preload cannot be given as --require; an inherited one would throw
    // in the worker, and an --import would read it through fs/promises
    // (docs/workers.md): workers run unprofiled (the main thread says so).
    return rest.length === argv.length ? none : { amended: [filename, { ...options, execArgv: rest }], preloads: false };
  }
  // Already preloaded the synchronous way.
  if (required && options.execArgv === undefined) return { amended: undefined, preloads: true };
  return { amended: [filename, { ...options, execArgv: [...rest, '--require', registerPath] }], preloads: true };
}
