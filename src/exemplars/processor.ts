import { TraceFlags } from '@opentelemetry/api';
import type { Attributes, Context, HrTime } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { SpanCounterSource } from '../core/counters.js';
import { Diagnostics } from '../core/diagnostics.js';
import type { TailSpanRef, WindowProfile } from '../core/window.js';
import { runSync, stepEvery } from '../core/slices.js';
import type { Steps } from '../core/slices.js';
import { aggregateSteps } from './aggregate.js';
import type { WindowAggregates } from './aggregate.js';
import {
  ATTR_EXEMPLAR_ID,
  ATTR_EXEMPLAR_STATUS,
  ATTR_PYROSCOPE_PROFILE_ID,
  ATTR_TAIL,
  ATTR_TAIL_QUANTILE,
  ATTR_TAIL_THRESHOLD_MS,
  PREFIX_SPAN,
  PREFIX_SUBTREE,
} from './attributes.js';
import { TailDetector } from './detector.js';
import { EnrichedSpan } from './enriched-span.js';
import { collectFigures, writeFigures, zeroFigures } from './figures.js';
import { Hold } from './hold.js';
import type { HoldEntry } from './hold.js';
import { DEFAULT_TAIL_SETTINGS } from './settings.js';
import type { TailSettings } from './types.js';

/** Retention hooks of the export stage (FileExporter `pin`/`unpin`). */
export interface RetentionPins {
  pin(profileId: string): void;
  unpin(profileId: string): void;
}

export interface TailSpanProcessorOptions {
  /** Where every span goes: Batch/Simple span processor, spans.jsonl writer ... */
  readonly downstream: SpanProcessor;
  readonly settings?: TailSettings;
  /** Length of a profile window in ms; a held span waits at most this plus the margin. */
  readonly windowMs: number;
  /** Id of the profile window open now; empty or undefined when none is open. */
  readonly currentProfileId?: () => string | undefined;
  /**
   * Ids of windows closed and still waiting for their turn in
   * {@link TailSpanProcessor.windowClosedSteps} (windows are built in order,
   * and a starved loop queues them): the spans held for those are not stale.
   */
  readonly pendingProfileIds?: () => Iterable<string>;
  /** Kernel/runtime counters over each span (runtime stage). */
  readonly counters?: SpanCounterSource;
  /** Keeps a window's files while tail spans that name it are held. */
  readonly retention?: RetentionPins;
  readonly diagnostics?: Diagnostics;
  /**
   * Policy applied to frame text leaving in `profiler.top_frames` (these are
   * exemplar data sent to the user's trace backend), e.g. the profile
   * stage's `Scrubber.scrubText`. Default: unchanged.
   */
  readonly scrubText?: (text: string) => string;
  /** Distinct span ids aggregated per window (default 100000). */
  readonly maxSpansPerWindow?: number;
}

/** Returned by `onWindowClosed`. */
export interface WindowClosedResult {
  /** Tail span refs appended to `window.tailSpans`. */
  readonly tailSpans: number;
  /** Held spans enriched from this window and forwarded. */
  readonly released: number;
  /** Windows that still have tail spans waiting for them. */
  readonly pendingProfileIds: readonly string[];
}

export interface TailStats {
  readonly spans: number;
  readonly tailSpans: number;
  readonly held: number;
  readonly releasedComplete: number;
  readonly releasedPartial: number;
  readonly releasedTimeout: number;
  readonly releasedEarly: number;
  readonly holdFull: number;
  readonly noProfile: number;
  readonly refsDropped: number;
  readonly operations: number;
  readonly overflowed: number;
  readonly errors: number;
}

interface Held extends HoldEntry {
  readonly span: ReadableSpan;
  readonly spanId: string;
  readonly durationNs: number;
  readonly startUnixNs: bigint;
  readonly localRoot: boolean;
}

/**
 * A span's counter token lives on the span object (one property store per
 * span, gone with the span) rather than in a WeakMap.
 */
const COUNTERS_TOKEN = Symbol('spanfuse.counters');
type WithToken = { [COUNTERS_TOKEN]?: unknown };

/** Held spans released between two yields of `windowClosedSteps` (fewer when they take long: see stepEvery). */
const RELEASE_STEP = 8;

/** Tail refs kept per window until it closes, and windows tracked at once. */
const MAX_REFS_PER_WINDOW = 10_000;
const MAX_REF_WINDOWS = 4;

/**
 * Marks the spans that land in the latency tail of their operation and gives
 * them the figures of their own samples.
 *
 * `onEnding` (SDK 2.x, the span is still writable) classifies every span and
 * writes the tail attributes. Spans out of the tail go to the downstream
 * processor at once. Tail spans wait, bounded in number and time, until
 * `onWindowClosed` brings the window that holds their samples; they are then
 * forwarded as an {@link EnrichedSpan} carrying `profiler.cpu.time_ns` and
 * the rest. Nothing here throws into the host: failures are counted.
 */
export class TailSpanProcessor implements SpanProcessor {
  readonly #downstream: SpanProcessor;
  readonly #settings: TailSettings;
  readonly #detector: TailDetector;
  readonly #currentProfileId: () => string | undefined;
  readonly #pendingProfileIds: () => Iterable<string>;
  readonly #counters: SpanCounterSource | undefined;
  readonly #retention: RetentionPins | undefined;
  readonly #diag: Diagnostics;
  readonly #maxSpansPerWindow: number;
  readonly #scrub: (text: string) => string;
  readonly #hold: Hold<Held>;
  readonly #pins = new Map<string, number>();
  readonly #refs = new Map<string, TailSpanRef[]>();
  /** The tail span `onEnding` decided to hold; `onEnd` for it follows synchronously. */
  #holding: Held | undefined;
  #previous: WindowAggregates | undefined;
  #shutdown: Promise<void> | undefined;
  #stats = {
    spans: 0,
    tailSpans: 0,
    held: 0,
    releasedComplete: 0,
    releasedPartial: 0,
    releasedTimeout: 0,
    releasedEarly: 0,
    holdFull: 0,
    noProfile: 0,
    refsDropped: 0,
    errors: 0,
  };

  constructor(options: TailSpanProcessorOptions) {
    this.#downstream = options.downstream;
    this.#settings = options.settings ?? DEFAULT_TAIL_SETTINGS;
    this.#detector = new TailDetector(this.#settings);
    this.#currentProfileId = options.currentProfileId ?? (() => undefined);
    this.#pendingProfileIds = options.pendingProfileIds ?? (() => []);
    this.#counters = options.counters;
    this.#retention = options.retention;
    this.#diag = options.diagnostics ?? new Diagnostics();
    this.#maxSpansPerWindow = options.maxSpansPerWindow ?? 100_000;
    this.#scrub = options.scrubText ?? ((text) => text);
    const delay = this.#settings.holdMaxDelayMs ?? options.windowMs + this.#settings.holdMarginMs;
    this.#hold = new Hold<Held>(
      this.#settings.holdMaxSpans,
      delay,
      (expired) => {
        this.#releaseAll(expired, 'timeout');
      },
      RELEASE_STEP,
    );
  }

  onStart(span: Span, parentContext: Context): void {
    if (this.#counters !== undefined) {
      try {
        (span as WithToken)[COUNTERS_TOKEN] = this.#counters.begin();
      } catch (err) {
        this.#fail('counters.begin', err);
      }
    }
    this.#downstream.onStart(span, parentContext);
  }

  onEnding(span: Span): void {
    this.#holding = undefined;
    try {
      this.#classify(span);
    } catch (err) {
      this.#fail('classify', err);
    }
    this.#downstream.onEnding?.(span);
  }

  onEnd(span: ReadableSpan): void {
    const h = this.#holding;
    if (h !== undefined && h.span === span) {
      this.#holding = undefined;
      this.#hold.add(h);
      this.#stats.held++;
      this.#pin(h.profileId);
      return;
    }
    this.#downstream.onEnd(span);
  }

  /**
   * Called by the pipeline after a window is collected and before it is
   * exported: appends the window's tail span refs to `window.tailSpans` and
   * forwards, enriched, the held spans whose samples it holds.
   */
  onWindowClosed(window: WindowProfile): WindowClosedResult {
    return runSync(this.windowClosedSteps(window));
  }

  /**
   * {@link onWindowClosed} in steps: the window's samples are aggregated a
   * few hundred at a time and the held spans released a few at a time, so a
   * caller can spread the work over event-loop turns. Run one window's steps
   * to the end before the next window's.
   */
  *windowClosedSteps(window: WindowProfile): Steps<WindowClosedResult> {
    let tailSpans = 0;
    let released = 0;
    try {
      const refs = this.#refs.get(window.profileId);
      if (refs !== undefined) {
        this.#refs.delete(window.profileId);
        window.tailSpans.push(...refs);
        tailSpans = refs.length;
      }
      const agg = this.#settings.enabled ? yield* aggregateSteps(window, this.#maxSpansPerWindow) : undefined;
      if (agg !== undefined && agg.spansDropped > 0) this.#diag.count('exemplars.window_spans_dropped', agg.spansDropped);
      const mine = this.#hold.takeWindow(window.profileId);
      // Spans waiting for a window that is neither this one, nor one closed
      // after it and waiting for its build, nor the open one missed their
      // window (it was never collected): release them now.
      const keep = new Set(this.#pendingProfileIds());
      keep.add(this.#currentProfileId() ?? '');
      const stale = this.#hold.takeAllBut(keep);
      const windows = [this.#previous, agg];
      this.#previous = agg;
      const due = stepEvery(RELEASE_STEP);
      for (const h of mine) {
        if (due()) yield;
        this.#releaseSafely(h, windows, undefined);
      }
      for (const h of stale) {
        if (due()) yield;
        this.#releaseSafely(h, windows, 'partial');
      }
      released = mine.length;
    } catch (err) {
      this.#fail('window', err);
    }
    return { tailSpans, released, pendingProfileIds: this.#hold.pendingProfileIds() };
  }

  /**
   * Forward every held span now, synchronously, enriched with what is known
   * (status `shutdown`), without flushing or shutting down downstream. For
   * the process `exit` path, where no promise will settle. Returns how many.
   */
  releaseAllSync(): number {
    const all = this.#hold.takeAll();
    this.#releaseAll(all, 'shutdown');
    return all.length;
  }

  forceFlush(): Promise<void> {
    this.#releaseAll(this.#hold.takeAll(), 'flush');
    return this.#downstream.forceFlush();
  }

  shutdown(): Promise<void> {
    this.#shutdown ??= (async () => {
      this.#releaseAll(this.#hold.takeAll(), 'shutdown');
      await this.#downstream.shutdown();
    })();
    return this.#shutdown;
  }

  stats(): TailStats {
    return {
      ...this.#stats,
      operations: this.#detector.operationCount,
      overflowed: this.#detector.overflowed,
    };
  }

  /** The detector, for inspection (operation count, sketch memory). */
  get detector(): TailDetector {
    return this.#detector;
  }

  #classify(span: Span): void {
    this.#stats.spans++;
    if (!this.#settings.enabled) return;
    const durationNs = hrNs(span.duration);
    const route = span.attributes['http.route'];
    const verdict = this.#detector.observe(
      span.name,
      span.kind,
      typeof route === 'string' ? route : undefined,
      durationNs / 1e6,
      span.endTime[0],
    );
    if (verdict === undefined) return;
    // Counters are read at the end only for tail spans, the only ones that
    // carry them: a source's end() may cost a syscall, and skipping it for
    // the other 99% leaves nothing behind (the token is garbage-collected).
    const counters = this.#endCounters(span);

    this.#stats.tailSpans++;
    const ctx = span.spanContext();
    span.setAttribute(ATTR_TAIL, true);
    span.setAttribute(ATTR_TAIL_QUANTILE, verdict.quantile);
    span.setAttribute(ATTR_TAIL_THRESHOLD_MS, round3(verdict.thresholdMs));
    span.setAttribute(ATTR_PYROSCOPE_PROFILE_ID, ctx.spanId);
    if (counters !== undefined) for (const [k, v] of Object.entries(counters)) span.setAttribute(k, v);

    const profileId = this.#currentProfileId();
    if (profileId === undefined || profileId === '') {
      this.#stats.noProfile++;
      span.setAttribute(ATTR_EXEMPLAR_STATUS, 'no_profile');
      return;
    }
    span.setAttribute(ATTR_EXEMPLAR_ID, profileId);
    this.#addRef(profileId, {
      spanId: ctx.spanId,
      traceId: ctx.traceId,
      operation: verdict.operation,
      quantile: verdict.quantile,
      thresholdMs: verdict.thresholdMs,
      durationMs: durationNs / 1e6,
    });
    // An unsampled span is dropped downstream: not worth a place in the hold.
    // After shutdown nothing would release it.
    if ((ctx.traceFlags & TraceFlags.SAMPLED) === 0 || this.#shutdown !== undefined) return;
    if (!this.#hold.hasRoom()) {
      this.#stats.holdFull++;
      this.#diag.count('exemplars.hold_full');
      span.setAttribute(ATTR_EXEMPLAR_STATUS, 'hold_full');
      return;
    }
    const parent = span.parentSpanContext;
    this.#holding = {
      span,
      spanId: ctx.spanId,
      profileId,
      deadline: this.#hold.deadlineFromNow(),
      durationNs,
      startUnixNs: hrBigNs(span.startTime),
      localRoot: parent === undefined || parent.isRemote === true,
    };
  }

  #endCounters(span: Span): Readonly<Record<string, number>> | undefined {
    if (this.#counters === undefined) return undefined;
    const token = (span as WithToken)[COUNTERS_TOKEN];
    if (token === undefined) return undefined;
    (span as WithToken)[COUNTERS_TOKEN] = undefined;
    try {
      return this.#counters.end(token);
    } catch (err) {
      this.#fail('counters.end', err);
      return undefined;
    }
  }

  #addRef(profileId: string, ref: TailSpanRef): void {
    let refs = this.#refs.get(profileId);
    if (refs === undefined) {
      if (this.#refs.size >= MAX_REF_WINDOWS) {
        // A window id that never closed: drop its refs, oldest first.
        const oldest = this.#refs.keys().next().value as string;
        this.#stats.refsDropped += this.#refs.get(oldest)?.length ?? 0;
        this.#refs.delete(oldest);
      }
      refs = [];
      this.#refs.set(profileId, refs);
    }
    if (refs.length >= MAX_REFS_PER_WINDOW) {
      this.#stats.refsDropped++;
      return;
    }
    refs.push(ref);
  }

  #releaseAll(entries: Held[], status: 'timeout' | 'flush' | 'shutdown'): void {
    for (const h of entries) this.#releaseSafely(h, [this.#previous], status);
  }

  /** One failing span (or a throwing downstream) must not take the others down. */
  #releaseSafely(h: Held, windows: readonly (WindowAggregates | undefined)[], forced: string | undefined): void {
    try {
      this.#release(h, windows, forced);
    } catch (err) {
      this.#fail('release', err);
    }
  }

  /**
   * Forward a held span with the figures the given windows have of it. With
   * no forced status it is `complete` unless it began before the oldest of
   * those windows (then `partial`).
   */
  #release(h: Held, windows: readonly (WindowAggregates | undefined)[], forced: string | undefined): void {
    let attrs: Attributes;
    let status: string;
    try {
      ({ attrs, status } = this.#enrichment(h, windows, forced));
    } catch (err) {
      // The span still goes on, with its tail marks and without figures.
      this.#fail('enrich', err);
      attrs = {};
      status = 'error';
    }
    attrs[ATTR_EXEMPLAR_STATUS] = status;
    if (status === 'complete') this.#stats.releasedComplete++;
    else if (status === 'partial') this.#stats.releasedPartial++;
    else if (status === 'timeout') this.#stats.releasedTimeout++;
    else this.#stats.releasedEarly++;
    this.#unpin(h.profileId);
    this.#downstream.onEnd(new EnrichedSpan(h.span, attrs));
  }

  #enrichment(
    h: Held,
    windows: readonly (WindowAggregates | undefined)[],
    forced: string | undefined,
  ): { attrs: Attributes; status: string } {
    const attrs: Attributes = {};
    let oldestStart: bigint | undefined;
    let hasCpu = false;
    for (const w of windows) {
      if (w === undefined) continue;
      hasCpu ||= w.hasCpu;
      if (oldestStart === undefined || w.startUnixNs < oldestStart) oldestStart = w.startUnixNs;
    }
    const own = collectFigures(h.spanId, windows, (w) => [w.bySpan]);
    const topN = this.#settings.topFrames;
    if (own !== undefined) writeFigures(attrs, PREFIX_SPAN, own, h.durationNs, hasCpu, topN, this.#scrub);
    else if (forced === undefined && oldestStart !== undefined) {
      // Its window closed without a sample of it: the span ran too briefly
      // (or only off-CPU) to be sampled. Zero samples is a measurement here.
      writeFigures(attrs, PREFIX_SPAN, zeroFigures(), h.durationNs, hasCpu, 0);
    }
    if (h.localRoot) {
      const sub = collectFigures(h.spanId, windows, (w) => [w.bySpan, w.byLocalRoot]);
      if (sub !== undefined) writeFigures(attrs, PREFIX_SUBTREE, sub, h.durationNs, hasCpu, topN, this.#scrub);
    }
    const status = forced ?? (oldestStart !== undefined && h.startUnixNs < oldestStart ? 'partial' : 'complete');
    return { attrs, status };
  }

  #pin(profileId: string): void {
    const n = this.#pins.get(profileId) ?? 0;
    this.#pins.set(profileId, n + 1);
    if (n === 0 && this.#retention !== undefined) {
      try {
        this.#retention.pin(profileId);
      } catch (err) {
        this.#fail('pin', err);
      }
    }
  }

  #unpin(profileId: string): void {
    const n = this.#pins.get(profileId);
    if (n === undefined) return;
    if (n > 1) {
      this.#pins.set(profileId, n - 1);
      return;
    }
    this.#pins.delete(profileId);
    if (this.#retention !== undefined) {
      try {
        this.#retention.unpin(profileId);
      } catch (err) {
        this.#fail('unpin', err);
      }
    }
  }

  #fail(kind: string, err: unknown): void {
    this.#stats.errors++;
    this.#diag.error(`exemplars.${kind}`, err);
  }
}

function hrNs(t: HrTime): number {
  return t[0] * 1e9 + t[1];
}

function hrBigNs(t: HrTime): bigint {
  return BigInt(t[0]) * 1_000_000_000n + BigInt(t[1]);
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
