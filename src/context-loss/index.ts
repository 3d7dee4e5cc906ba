/**
 * Context-loss detection: CPU samples with no span while spans are in flight
 * on their thread, and the functions that ran them.
 */
export { ContextLossStage, CONTEXT_LOSS_PREFIX } from './stage.js';
export type { ContextLossStats } from './stage.js';
export { InFlightSpans, busyAt } from './in-flight.js';
export type { InFlightTimeline } from './in-flight.js';
export { contextLoss } from './window-figure.js';
export type { ContextLoss, LostFunction, LostStack } from './window-figure.js';
