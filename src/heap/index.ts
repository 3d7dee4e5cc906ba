export { startHeapSampler } from './start.js';
export type { HeapSamplerOptions } from './start.js';
export { ALLOC_OBJECTS, ALLOC_SPACE, INUSE_OBJECTS, INUSE_SPACE } from './types.js';
export type { HeapSampler, HeapProfileKind, HeapBackend } from './types.js';
