export { TailSpanProcessor } from './processor.js';
export type { TailSpanProcessorOptions, RetentionPins, WindowClosedResult, TailStats } from './processor.js';
export { TailDetector } from './detector.js';
export { Operation, operationKey, OVERFLOW_OPERATION } from './operation.js';
export { LogSketch } from './sketch.js';
export { EnrichedSpan } from './enriched-span.js';
export { aggregateSteps, aggregateWindow } from './aggregate.js';
export type { WindowAggregates } from './aggregate.js';
export { FiguresTable } from './figures-table.js';
export { parseQuantile } from './quantile.js';
export type { ParsedQuantile } from './quantile.js';
export { DEFAULT_TAIL_SETTINGS, DEFAULT_TAIL_RULE, tailSettings } from './settings.js';
export type { TailRule, TailSettings, TailVerdict } from './types.js';
export {
  ATTR_TAIL,
  ATTR_TAIL_QUANTILE,
  ATTR_TAIL_THRESHOLD_MS,
  ATTR_EXEMPLAR_ID,
  ATTR_EXEMPLAR_STATUS,
  ATTR_PYROSCOPE_PROFILE_ID,
  PREFIX_SPAN,
  PREFIX_SUBTREE,
} from './attributes.js';
export { labelTailSamples, labelTailSteps, LABEL_TAIL_OPERATION, LABEL_TAIL_QUANTILE } from './label-tails.js';
