import { DEFAULT_TAIL_SETTINGS, parseQuantile } from '../exemplars/index.js';
import type { TailRule, TailSettings } from '../exemplars/index.js';
import { envBool, envInt, envNumber, envString } from './env.js';
import type { EnvSource, Problems } from './env.js';

/** How one operation (or all) decides its tail. */
export interface TailRuleOptions {
  /** `p99` (default), `p95`, `p99.9`, or a number in (0, 1). */
  quantile?: string | number;
  /**
   * Fixed latency budget in ms. Alone (no quantile anywhere) it selects
   * fixed-budget mode; with a quantile, spans over the budget are always tail
   * spans, also during warm-up.
   */
  thresholdMs?: number;
}

/** `tail` section of the options of `start()`. */
export interface TailOptions extends TailRuleOptions {
  /** Tail detection and span enrichment (`SPANFUSE_TAIL_ENABLED`). Default true. */
  enabled?: boolean;
  /** Observations before an operation's quantile applies (`SPANFUSE_TAIL_WARMUP`). Default 100. */
  warmup?: number;
  /**
   * Half-life of an observation in the running quantile, ms
   * (`SPANFUSE_TAIL_HALF_LIFE_MS`); 0 keeps every span since start at equal
   * weight. Default 300000 (5 minutes).
   */
  halfLifeMs?: number;
  /** Operations tracked; beyond, one overflow operation (`SPANFUSE_TAIL_MAX_OPERATIONS`). Default 512. */
  maxOperations?: number;
  /** Relative accuracy of the quantile sketches. Default 0.01. */
  relativeAccuracy?: number;
  /** Tail spans held at once (`SPANFUSE_TAIL_HOLD_MAX_SPANS`). Default 2048. */
  holdMaxSpans?: number;
  /** Longest hold in ms (`SPANFUSE_TAIL_HOLD_MAX_DELAY_MS`). Default: window length + margin. */
  holdMaxDelayMs?: number;
  /** Margin over the window length (`SPANFUSE_TAIL_HOLD_MARGIN_MS`). Default 5000. */
  holdMarginMs?: number;
  /** Leaf frames in `profiler.top_frames`. Default 5. */
  topFrames?: number;
  /** Per-operation rules keyed by operation key (`GET /users/:id (SERVER)`) or span name; each replaces the global rule. */
  operations?: Record<string, TailRuleOptions>;
}

const COUNT = { min: 0, max: 1_000_000 };
const OPS = { min: 1, max: 1_000_000 };
const HOLD = { min: 0, max: 1_000_000 };
const MS = { min: 0, max: 86_400_000 };
const BUDGET = { min: 0, max: 86_400_000 };
const FRAMES = { min: 0, max: 100 };

/**
 * The tail section: code > env > default, checked after the merge. Never
 * throws; every problem goes to `problems` with its field and fix.
 */
export function resolveTailConfig(options: TailOptions | undefined, env: EnvSource, problems: Problems): TailSettings {
  const d = DEFAULT_TAIL_SETTINGS;
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    problems.add('tail', 'expected an object of tail options (or nothing)');
    options = undefined;
  }
  const o = options ?? {};

  const enabled = bool(o.enabled, 'tail.enabled', problems) ?? envBool(env, 'SPANFUSE_TAIL_ENABLED', problems) ?? d.enabled;
  const envQuantile = envString(env, 'SPANFUSE_TAIL_QUANTILE');
  const envBudget = envNumber(env, 'SPANFUSE_TAIL_THRESHOLD_MS', problems, BUDGET);
  const rule = resolveRule(
    o.quantile !== undefined ? { value: o.quantile, field: 'tail.quantile' } : envQuantile !== undefined ? { value: envQuantile, field: 'SPANFUSE_TAIL_QUANTILE' } : undefined,
    o.thresholdMs !== undefined ? num(o.thresholdMs, 'tail.thresholdMs', problems, BUDGET) : envBudget,
    problems,
  );

  const overrides = new Map<string, TailRule>();
  if (o.operations !== undefined) {
    if (o.operations === null || typeof o.operations !== 'object') {
      problems.add('tail.operations', 'expected an object mapping an operation key or span name to { quantile?, thresholdMs? }');
    } else {
      for (const [key, ro] of Object.entries(o.operations)) {
        const field = `tail.operations[${JSON.stringify(key)}]`;
        if (ro === null || typeof ro !== 'object') {
          problems.add(field, 'expected { quantile?, thresholdMs? }');
          continue;
        }
        if (ro.quantile === undefined && ro.thresholdMs === undefined) {
          problems.add(field, 'set quantile, thresholdMs or both');
          continue;
        }
        const r = resolveRule(
          ro.quantile !== undefined ? { value: ro.quantile, field: `${field}.quantile` } : undefined,
          ro.thresholdMs !== undefined ? num(ro.thresholdMs, `${field}.thresholdMs`, problems, BUDGET) : undefined,
          problems,
        );
        overrides.set(key, r);
      }
    }
  }

  return {
    enabled,
    rule,
    overrides,
    warmup: int(o.warmup, 'tail.warmup', problems, COUNT) ?? envInt(env, 'SPANFUSE_TAIL_WARMUP', problems, COUNT) ?? d.warmup,
    halfLifeMs: halfLife(
      int(o.halfLifeMs, 'tail.halfLifeMs', problems, MS) ?? envInt(env, 'SPANFUSE_TAIL_HALF_LIFE_MS', problems, MS) ?? d.halfLifeMs,
      o.halfLifeMs !== undefined ? 'tail.halfLifeMs' : 'SPANFUSE_TAIL_HALF_LIFE_MS',
      problems,
    ),
    maxOperations:
      int(o.maxOperations, 'tail.maxOperations', problems, OPS) ?? envInt(env, 'SPANFUSE_TAIL_MAX_OPERATIONS', problems, OPS) ?? d.maxOperations,
    relativeAccuracy: num(o.relativeAccuracy, 'tail.relativeAccuracy', problems, { min: 0.0001, max: 0.5 }) ?? d.relativeAccuracy,
    maxBins: d.maxBins,
    holdMaxSpans:
      int(o.holdMaxSpans, 'tail.holdMaxSpans', problems, HOLD) ?? envInt(env, 'SPANFUSE_TAIL_HOLD_MAX_SPANS', problems, HOLD) ?? d.holdMaxSpans,
    holdMaxDelayMs:
      int(o.holdMaxDelayMs, 'tail.holdMaxDelayMs', problems, MS) ?? envInt(env, 'SPANFUSE_TAIL_HOLD_MAX_DELAY_MS', problems, MS) ?? d.holdMaxDelayMs,
    holdMarginMs:
      int(o.holdMarginMs, 'tail.holdMarginMs', problems, MS) ?? envInt(env, 'SPANFUSE_TAIL_HOLD_MARGIN_MS', problems, MS) ?? d.holdMarginMs,
    topFrames: int(o.topFrames, 'tail.topFrames', problems, FRAMES) ?? d.topFrames,
  };
}

/** A quantile alone, a budget alone (fixed-budget mode), both, or neither (the default p99). */
function resolveRule(
  quantile: { value: unknown; field: string } | undefined,
  budgetMs: number | undefined,
  problems: Problems,
): TailRule {
  if (quantile === undefined) {
    if (budgetMs !== undefined) return { quantile: undefined, quantileLabel: undefined, budgetMs };
    return DEFAULT_TAIL_SETTINGS.rule;
  }
  const v = quantile.value;
  const parsed = typeof v === 'string' || typeof v === 'number' ? parseQuantile(v) : 'expected a string like "p99" or a number in (0, 1)';
  if (typeof parsed === 'string') {
    problems.add(quantile.field, parsed);
    return { ...DEFAULT_TAIL_SETTINGS.rule, budgetMs };
  }
  return { quantile: parsed.quantile, quantileLabel: parsed.label, budgetMs };
}

/** 0 (no decay) or at least one second: decay steps follow span end seconds. */
function halfLife(ms: number, field: string, problems: Problems): number {
  if (ms === 0 || ms >= 1000) return ms;
  problems.add(field, `expected 0 (no decay) or at least 1000 ms, got ${ms}`);
  return DEFAULT_TAIL_SETTINGS.halfLifeMs;
}

function bool(v: unknown, field: string, problems: Problems): boolean | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'boolean') return v;
  problems.add(field, `expected true or false, got ${JSON.stringify(v)}`);
  return undefined;
}

function num(v: unknown, field: string, problems: Problems, b: { min: number; max: number }): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'number' && Number.isFinite(v) && v >= b.min && v <= b.max) return v;
  problems.add(field, `expected a number from ${b.min} to ${b.max}, got ${JSON.stringify(v)}`);
  return undefined;
}

function int(v: unknown, field: string, problems: Problems, b: { min: number; max: number }): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= b.min && v <= b.max) return v;
  problems.add(field, `expected a whole number from ${b.min} to ${b.max}, got ${JSON.stringify(v)}`);
  return undefined;
}
