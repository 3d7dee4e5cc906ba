/**
 * Sample label keys (pprof string labels; OTLP attributes and links). This is
 * the contract of DESIGN.md; every stage uses these names.
 */
export const LABEL_TRACE_ID = 'trace_id';
export const LABEL_SPAN_ID = 'span_id';
export const LABEL_TRACE_FLAGS = 'trace_flags';
export const LABEL_SPAN_NAME = 'span_name';
export const LABEL_LOCAL_ROOT_SPAN_ID = 'local_root_span_id';
export const LABEL_THREAD_ID = 'thread.id';
export const LABEL_THREAD_NAME = 'thread.name';
/** Numeric label: the sample's wall-clock time, Unix nanoseconds. */
export const LABEL_TIMESTAMP_NS = 'end_timestamp_ns';

/** Names of the leaf frames @datadog/pprof gives to runtime activity. */
export const FRAME_GARBAGE_COLLECTION = 'Garbage Collection';
