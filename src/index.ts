/**
 * spanfuse: a continuous profiler for Node.js fused with OpenTelemetry
 * tracing. Public API only; stages are wired in `spanfuse.ts`.
 */
import { resolveConfig } from './config/index.js';
import type { SpanfuseOptions } from './config/index.js';
import { Spanfuse } from './spanfuse.js';
import { warnIfLateStart } from './startup/index.js';

export { Spanfuse } from './spanfuse.js';
export type { SpanfuseStats } from './spanfuse.js';
export type { SpanfuseOptions, ResolvedConfig } from './config/index.js';
export { SpanfuseError, ConfigError } from './core/errors.js';
export type { SpanfuseErrorCode, ConfigProblem } from './core/errors.js';
export type { WindowProfile, TailSpanRef, ContextMode } from './core/window.js';
export { carryContext, injectTraceContext, runInCarriedContext, tracedTask, bindToContext, captureContext } from './workers/index.js';
export type { CarriedTask, RunCarriedOptions, TraceCarrier, FlushStats } from './workers/index.js';
export type { ContextLossStats, ContextLoss, LostFunction, LostStack } from './context-loss/index.js';
import { spanfuseVersion } from './core/version.js';
import { ensureRegistry } from './workers/index.js';

// Main thread: publish the worker registry now, not at start(), so that a
// worker the app creates before it starts spanfuse has it too: when that
// worker's own code calls start(), its stage loads are then announced and
// its terminate() waits for them (core/require-esm.ts).
ensureRegistry();

/** spanfuse's version (from its package.json). */
export const VERSION: string = spanfuseVersion();

const ACTIVE = Symbol.for('spanfuse.active');
type Holder = { [ACTIVE]?: Spanfuse };

/**
 * Start profiling in this thread. Reads OTEL_* and SPANFUSE_* from the
 * environment; options given here win. Throws a ConfigError listing every bad
 * value. Returns `undefined` when disabled (`enabled: false` or
 * `SPANFUSE_ENABLED=false`). A second call returns the running instance.
 */
export function start(options: SpanfuseOptions = {}): Spanfuse | undefined {
  const config = resolveConfig(options);
  const holder = globalThis as Holder;
  const running = holder[ACTIVE];
  if (running !== undefined) {
    process.emitWarning('spanfuse: start() called while already running in this thread; returning the running instance', {
      code: 'SPANFUSE_ALREADY_STARTED',
    });
    return running;
  }
  if (!config.enabled) return undefined;
  warnIfLateStart();
  const instance = new Spanfuse(config);
  instance.begin();
  holder[ACTIVE] = instance;
  const shutdown = instance.shutdown.bind(instance);
  instance.shutdown = (deadlineMs?: number) => {
    if (holder[ACTIVE] === instance) delete holder[ACTIVE];
    return shutdown(deadlineMs);
  };
  return instance;
}

/** The instance running in this thread, if any (e.g. one the preload started). */
export function current(): Spanfuse | undefined {
  return (globalThis as Holder)[ACTIVE];
}
