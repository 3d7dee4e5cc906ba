export { JsonlSpanProcessor, SPANS_FILE, toJson } from './jsonl-processor.js';
export type { JsonlSpanProcessorOptions } from './jsonl-processor.js';
export { LocalRootProcessor } from './local-root-processor.js';
export { installTracing } from './install.js';
export type { TracingInstallation, TracerProviderState, ContextManagerState } from './install.js';
export { hrTimeToNanos } from './time.js';
