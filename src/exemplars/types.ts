/**
 * What makes a span a tail span of its operation. A rule has a quantile, a
 * fixed budget, or both:
 * - quantile only: the span is in the tail when its duration exceeds the
 *   running quantile of its operation (only after warm-up);
 * - budget only: the span is in the tail when it exceeds `budgetMs`;
 * - both: either test marks it (the budget is a ceiling that always applies,
 *   also during warm-up, when the quantile is not trusted yet).
 */
export interface TailRule {
  /** Quantile in (0, 1), e.g. 0.99. */
  readonly quantile: number | undefined;
  /** How the quantile is written on spans (`profiler.tail.quantile`), e.g. `p99`. */
  readonly quantileLabel: string | undefined;
  /** Fixed latency budget in milliseconds. */
  readonly budgetMs: number | undefined;
}

/** Resolved settings of the exemplar stage (see `src/config/tail.ts`). */
export interface TailSettings {
  readonly enabled: boolean;
  /** Rule for every operation without an override. */
  readonly rule: TailRule;
  /** Overrides keyed by operation key (`GET /users/:id (SERVER)`) or span name. */
  readonly overrides: ReadonlyMap<string, TailRule>;
  /** Observations an operation needs before its quantile threshold applies. */
  readonly warmup: number;
  /**
   * Half-life of an observation in an operation's sketch, in ms: the
   * running quantile weighs recent spans more (0: all spans since start
   * weigh the same).
   */
  readonly halfLifeMs: number;
  /** Distinct operations tracked; the rest share one overflow operation. */
  readonly maxOperations: number;
  /** Relative accuracy of each operation's quantile sketch, e.g. 0.01. */
  readonly relativeAccuracy: number;
  /** Bins per sketch; beyond that the lowest bins collapse (tail stays exact). */
  readonly maxBins: number;
  /** Tail spans held at once waiting for their window; beyond, forwarded unenriched. */
  readonly holdMaxSpans: number;
  /** Longest hold; `undefined` means one window plus `holdMarginMs`. */
  readonly holdMaxDelayMs: number | undefined;
  /** Margin added to the window length when `holdMaxDelayMs` is not set. */
  readonly holdMarginMs: number;
  /** Number of leaf frames listed in `profiler.top_frames`. */
  readonly topFrames: number;
}

/** The outcome for a span found in the tail of its operation. */
export interface TailVerdict {
  /** Operation key, e.g. `GET /users/:id (SERVER)`. */
  readonly operation: string;
  /** `p99`, `p95`, `p99.9`, ... or `budget`. */
  readonly quantile: string;
  readonly thresholdMs: number;
}
