export { currentThreadIdentity, listThreads, ThreadInventory, THREADPOOL_COMM } from './threads.js';
export type { ThreadIdentity, ThreadInfo, ThreadKind, ThreadpoolNaming } from './threads.js';
export { currentTid } from './thread-id.js';
export { RuntimeSignals } from './runtime-signals.js';
export type { RuntimeWindow, RuntimeStats, RuntimeStartOptions } from './runtime-signals.js';
export { LABEL_WAIT_REASON } from './offcpu-profile.js';
export { ThreadCounterReader } from './thread-stats.js';
export type { ThreadCounters } from './thread-stats.js';
export { ThreadWindowCounters } from './span-counters.js';
export {
  encodePerfAttr,
  PERF_ATTR_SIZE,
  PERF_TYPE_HARDWARE,
  PERF_TYPE_SOFTWARE,
  PERF_TYPE_HW_CACHE,
  PERF_FORMAT_GROUP,
} from './perf-attr.js';
export type { PerfAttrInput } from './perf-attr.js';
export { PerfGroup, HARDWARE_EVENTS, SOFTWARE_EVENTS, perfErrnoReason } from './perf-events.js';
export type { ThreadStateStats } from './thread-state-sampler.js';
export { ProcessContextPublisher, OTEL_CTX_HEADER_BYTES, OTEL_CTX_VERSION } from './process-context.js';
export type { PublishResult } from './process-context.js';
export { encodeProcessContext } from './proto.js';
export type { ContextValue } from './proto.js';
export { ThreadContextPublisher, detectThreadContext, THREAD_CONTEXT_KEYS } from './thread-context.js';
export type { ThreadContextSupport } from './thread-context.js';
export { createThreadSpanCounters } from './thread-span-counters.js';
export type { ThreadSpanCounters } from './thread-span-counters.js';
export { detectPlatform } from './platform.js';
export type { Platform, Arch } from './platform.js';
