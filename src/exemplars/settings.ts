import type { TailRule, TailSettings } from './types.js';

export const DEFAULT_TAIL_RULE: TailRule = { quantile: 0.99, quantileLabel: 'p99', budgetMs: undefined };

export const DEFAULT_TAIL_SETTINGS: TailSettings = {
  enabled: true,
  rule: DEFAULT_TAIL_RULE,
  overrides: new Map(),
  warmup: 100,
  halfLifeMs: 300_000,
  maxOperations: 512,
  relativeAccuracy: 0.01,
  // 512 buckets at 1% cover a ratio of about e^10 (e.g. 0.1 ms to 2.7 s)
  // before the lowest ones collapse; 4 KiB per operation at most.
  maxBins: 512,
  holdMaxSpans: 2048,
  holdMaxDelayMs: undefined,
  holdMarginMs: 5000,
  topFrames: 5,
};

/** Settings with some fields replaced; for tests and embedders. */
export function tailSettings(overrides: Partial<TailSettings> = {}): TailSettings {
  return { ...DEFAULT_TAIL_SETTINGS, ...overrides };
}
