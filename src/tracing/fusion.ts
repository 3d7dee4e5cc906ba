import type { Context, Span } from '@opentelemetry/api';
import type { ReadableSpan, Span as SdkSpan, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Diagnostics } from '../core/diagnostics.js';
import type { TracerProviderState } from './install.js';

/**
 * Whether spans reach spanfuse's span processor (local roots, tail marks,
 * tail figures), as `stats().fusion.state` reports it:
 * - `spanfuse-provider`: spanfuse's own provider serves spans; all fused.
 * - `fused`: the app's provider runs `spanProcessor()`; spans pass it.
 * - `unfused`: the app's provider does not run it: samples are still
 *   labelled with the app's spans, but no span can be marked as a tail.
 * - `pending`: the app's provider is registered, no span seen yet.
 * - `no-provider`: nobody provides spans.
 */
export type FusionState = 'spanfuse-provider' | 'fused' | 'unfused' | 'pending' | 'no-provider';

export interface FusionStats {
  readonly state: FusionState;
  /** Spans started through a processor from `spanProcessor()`. */
  readonly appSpansFused: number;
  /** Recording spans entered that never passed spanfuse's processor. */
  readonly unfusedSpansSeen: number;
  /** Why the setup is unfused, and the fix (also printed once). */
  readonly reason?: string;
}

const ZERO_CODE = 'auto-instrumentations-node/register';
/**
 * Set on each span a spanfuse processor started. A property, not a WeakSet
 * entry: the processor notes every span for the process's life (a span
 * started before a `rearm()` may be entered after it), and a WeakSet insert
 * per span was 5% of the CPU of the per-span benchmark plus ephemeron work
 * at every GC; a symbol store on the SDK's span shape is an inline-cache hit.
 */
const NOTED = Symbol('spanfuse.fusion.noted');
type Noted = { [NOTED]?: true };
/** Spans in a row that passed spanfuse's processor before the watch rests. */
const FUSED_VERDICT = 1000;

/**
 * Watches whether the spans the app enters went through spanfuse's span
 * processor. Every processor spanfuse hands out notes the spans it starts;
 * the context manager shows it each span it enters. The first recording span
 * that no spanfuse processor saw makes the setup `unfused`: one warning with
 * the fix, and the watch stops. After
 * FUSED_VERDICT spans in a row that did pass, the watch stops too, until
 * `rearm()` (a tracer handed over to a new provider). Its cost is one
 * property store per started span, and one read per entered span while it
 * watches.
 */
export class FusionMonitor {
  readonly #diag: Diagnostics;
  readonly #zeroCode: boolean;
  #watching = true;
  #passedInRow = 0;
  #appFused = 0;
  #unfused = 0;
  #reason: string | undefined;
  #providerBeforeStart = false;

  constructor(diag: Diagnostics, argv: readonly string[] = [...process.execArgv, process.env.NODE_OPTIONS ?? '']) {
    this.#diag = diag;
    this.#zeroCode = argv.some((a) => a.includes(ZERO_CODE));
  }

  /** A processor that only notes the spans it starts; `app` counts them as the app provider's. */
  noteProcessor(app: boolean): SpanProcessor {
    return {
      onStart: (span: SdkSpan, _ctx: Context) => {
        (span as unknown as Noted)[NOTED] = true;
        if (app) this.#appFused++;
      },
      onEnd: (_span: ReadableSpan) => {},
      forceFlush: () => Promise.resolve(),
      shutdown: () => Promise.resolve(),
    };
  }

  /**
   * The app registered its provider before spanfuse started: that provider
   * cannot hold spanfuse's processor. Warn now, at startup.
   */
  providerRegisteredBefore(): void {
    this.#providerBeforeStart = true;
    this.#markUnfused(
      'the tracer provider was registered before spanfuse started, so it cannot contain spanfuse.spanProcessor()',
    );
  }

  /** Called for each span the context manager enters, until a verdict. */
  check(span: Span): void {
    if (!this.#watching) return;
    try {
      if ((span as unknown as Noted)[NOTED] === true) {
        if (++this.#passedInRow >= FUSED_VERDICT) this.#watching = false;
        return;
      }
      if (!span.isRecording()) return;
    } catch {
      return; // a foreign span object that cannot say: no verdict from it
    }
    this.#unfused++;
    this.#markUnfused("the app's tracer provider does not run spanfuse.spanProcessor()");
  }

  /** Watch again (another provider now serves), unless the setup is already known to be unfused. */
  rearm(): void {
    if (this.#unfused > 0 || this.#providerBeforeStart) return;
    this.#passedInRow = 0;
    this.#watching = true;
  }

  /** True while `check()` still looks at spans. */
  get watching(): boolean {
    return this.#watching;
  }

  stats(provider: TracerProviderState): FusionStats {
    const state = this.#state(provider);
    const base = { state, appSpansFused: this.#appFused, unfusedSpansSeen: this.#unfused };
    return state === 'unfused' && this.#reason !== undefined ? { ...base, reason: this.#reason } : base;
  }

  #state(provider: TracerProviderState): FusionState {
    if (provider === 'spanfuse') return 'spanfuse-provider';
    if (provider === 'none') return 'no-provider';
    if (this.#unfused > 0 || (this.#providerBeforeStart && this.#appFused === 0)) return 'unfused';
    return this.#appFused > 0 ? 'fused' : 'pending';
  }

  #markUnfused(why: string): void {
    this.#watching = false;
    this.#reason = `${why}: samples are labelled with the app's spans, but tail spans cannot be marked or carry profile figures. ${this.#fix()}`;
    this.#diag.count('fusion.unfused');
    this.#diag.warnOnce('fusion', `spanfuse: ${this.#reason}`);
  }

  #fix(): string {
    if (this.#zeroCode) {
      return (
        "OpenTelemetry's zero-code start (@opentelemetry/auto-instrumentations-node/register) builds its provider from OTEL_* " +
        'variables and offers no way to add a span processor (SDK 2.x has no addSpanProcessor). To fuse tails, replace that ' +
        'preload with a setup file preloaded after spanfuse/register: new NodeSDK({ spanProcessors: ' +
        '[current().spanProcessor(new BatchSpanProcessor(new OTLPTraceExporter()))], instrumentations: ' +
        "[getNodeAutoInstrumentations()] }).start() (README: 'Your own provider')."
      );
    }
    return (
      'Fix: preload spanfuse/register before the OpenTelemetry setup and wrap the processor that exports your spans: ' +
      "spanProcessors: [current().spanProcessor(new BatchSpanProcessor(exporter))] (README: 'Your own provider')."
    );
  }
}
