/**
 * Worker threads: flush-before-terminate, preload injection, and the helpers
 * that carry span context into workers and queued work.
 */
export { startWorkerSupport } from './support.js';
export type { WorkerSupport } from './support.js';
export type { FlushStats } from './flusher.js';
export { injectPreloadIntoWorkers } from './inject.js';
export { ensureRegistry, markPreloaded, selfTerminating } from './registry.js';
export { workerSafeExporter, WorkerJsonlSpanProcessor } from './sync-output.js';
export { carryContext, injectTraceContext, runInCarriedContext, tracedTask } from './carry.js';
export type { CarriedTask, RunCarriedOptions, TraceCarrier } from './carry.js';
export { bindToContext, captureContext } from './bind.js';
