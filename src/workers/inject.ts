import { createRequire, syncBuiltinESMExports } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { WorkerOptions } from 'node:worker_threads';

const INJECTED = Symbol.for('spanfuse.worker.inject');

/**
 * Make workers that Node would start without the preload start with it:
 * - eval workers (`new Worker(code, { eval: true })`): Node runs `--require`
 *   preloads in them but not `--import` ones, so `--require <register.js>` is
 *   added (require(esm) loads it);
 * - workers given their own `execArgv` without spanfuse: `--import <register>`
 *   is added to it.
 * Workers that inherit the parent's flags already run the preload. spanfuse's
 * own helper threads (`workerData.spanfuseInternal`) and workers whose `env`
 * sets SPANFUSE_ENABLED=false are left alone. When Node rejects the amended
 * options, the worker starts with the caller's own options, unprofiled.
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
        const amended = amend(args, registerUrl, registerPath);
        if (amended !== undefined) {
          try {
            return Reflect.construct(target, amended, newTarget) as object;
          } catch {
            // e.g. ERR_WORKER_INVALID_EXEC_ARGV: the caller's options as given
          }
        }
        return Reflect.construct(target, args, newTarget) as object;
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

function mentionsSpanfuse(argv: readonly string[], registerPath: string): boolean {
  return argv.some((a) => a.includes('spanfuse/register') || a.includes(registerPath));
}

/** Amended constructor arguments, or undefined when the worker needs nothing. */
function amend(args: unknown[], registerUrl: string, registerPath: string): unknown[] | undefined {
  const [filename, raw] = args;
  const options = (raw ?? {}) as WorkerOptions & { workerData?: { spanfuseInternal?: unknown } };
  if (typeof options !== 'object') return undefined;
  if ((options.workerData as { spanfuseInternal?: unknown } | undefined)?.spanfuseInternal === true) return undefined;
  const env = options.env as Record<string, string | undefined> | undefined;
  if (env !== undefined && typeof env === 'object' && /^(false|0|no|off)$/i.test(env.SPANFUSE_ENABLED ?? '')) return undefined;
  const own = options.execArgv;
  if (options.eval === true) {
    const base = own ?? process.execArgv;
    if (base.some((a, i) => (a === '--require' || a === '-r') && mentionsSpanfuse([base[i + 1] ?? ''], registerPath))) return undefined;
    return [filename, { ...options, execArgv: [...base, '--require', registerPath] }];
  }
  if (own !== undefined && !mentionsSpanfuse(own, registerPath)) {
    return [filename, { ...options, execArgv: [...own, '--import', registerUrl] }];
  }
  return undefined;
}
