export { SpanfuseError, ConfigError } from './errors.js';
export type { SpanfuseErrorCode, ConfigProblem } from './errors.js';
export { Diagnostics, describe } from './diagnostics.js';
export type { WarnSink } from './diagnostics.js';
export {
  LABEL_TRACE_ID,
  LABEL_SPAN_ID,
  LABEL_TRACE_FLAGS,
  LABEL_SPAN_NAME,
  LABEL_LOCAL_ROOT_SPAN_ID,
  LABEL_THREAD_ID,
  LABEL_THREAD_NAME,
  LABEL_TIMESTAMP_NS,
  FRAME_GARBAGE_COLLECTION,
} from './labels.js';
export type { SpanCounterSource } from './counters.js';
export type { WindowProfile, TailSpanRef, ContextMode, AttributeValue } from './window.js';
export {
  Profile,
  Sample, Label, Location, Line, Function, Mapping, ValueType, StringTable, LazyStringTable, findLabel } from './pprof.js';
