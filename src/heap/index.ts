export { HeapStage } from './stage.js';
export { startHeapSampler } from './start.js';
export type { HeapSamplerOptions } from './start.js';
export { ALLOC_OBJECTS, ALLOC_SPACE, INUSE_OBJECTS, INUSE_SPACE } from './types.js';
export type { HeapSampler, HeapProfileKind, HeapBackend } from './types.js';
export {
  attributeAllocations,
  attributeWindow,
  labelHeapSamples,
  LABEL_OPERATION,
  UNATTRIBUTED,
} from './attribute.js';
export type { OperationAllocation, AttributionOptions, LabelResult } from './attribute.js';
export { estimateSpanAllocations } from './span-estimate.js';
export type { SpanAllocation } from './span-estimate.js';
export { NO_SPAN } from './wall-index.js';
export { addGcTotalsSteps, gcTotalsSteps } from './gc.js';
export type { GcTotals } from './gc.js';
