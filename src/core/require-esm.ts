import { createRequire } from 'node:module';
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
 * `what`, where require(esm) is off.
 */
export function lazyRequire(base: string): <T>(path: string, what: string) => T {
  const req = createRequire(base);
  return <T>(path: string, what: string): T => {
    if (!REQUIRE_ESM) {
      throw new SpanfuseError('SPANFUSE_UNSUPPORTED', `spanfuse: ${what} needs require(esm), which --no-experimental-require-module turns off`);
    }
    return req(path) as T;
  };
}
