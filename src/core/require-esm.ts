import { createRequire } from 'node:module';
import { beginStageLoad, endStageLoad } from '../workers/registry.js';
import { SpanfuseError } from './errors.js';

/**
 * Whether this process can require() ES modules: Node >= 20.19 (and 22.12)
 * can, unless started with `--no-experimental-require-module`. spanfuse's
 * worker preload (`--require`) and the stages it loads only when they are
 * used (below) need it.
 */
export const REQUIRE_ESM = (process.features as { require_module?: boolean }).require_module !== false;

/**
 * A `require()` relative to `base` (a module's `import.meta.url`) for the
 * parts spanfuse loads only when it uses them, so that threads that do not
 * use them never load their modules. Throws SPANFUSE_UNSUPPORTED, naming
 * `what`, where require(esm) is off, and in a worker whose termination has
 * begun.
 *
 * In a worker the load is announced in the worker registry first: on Node
 * 20 a termination that lands while require() instantiates ES modules
 * aborts the whole process, so terminate() and the process's exit wait for
 * it (workers/terminate-hook.ts). Under the preload the preload's own mark
 * covers this already; this covers a worker whose own code calls start().
 */
export function lazyRequire(base: string): <T>(path: string, what: string) => T {
  const req = createRequire(base);
  return <T>(path: string, what: string): T => {
    if (!REQUIRE_ESM) {
      throw new SpanfuseError('SPANFUSE_UNSUPPORTED', `spanfuse: ${what} needs require(esm), which --no-experimental-require-module turns off`);
    }
    if (!beginStageLoad()) {
      throw new SpanfuseError('SPANFUSE_UNSUPPORTED', `spanfuse: ${what} not loaded: this worker is being terminated`);
    }
    try {
      return req(path) as T;
    } finally {
      endStageLoad();
    }
  };
}
