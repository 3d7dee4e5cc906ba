export { detectContextMode } from './mode.js';
export { NO_SPAN, spanNameOf, resolveSample, sampleOfSpan, localRootOf, noteLocalRoot, noteEnd, sampleName } from './sample-context.js';
export type { SampleContext } from './sample-context.js';
export { FrameBinder, HookBinder } from './binder.js';
export type { SamplerBinder } from './binder.js';
export { SpanfuseContextManager } from './manager.js';
export type { ThreadContextRunner } from './manager.js';
