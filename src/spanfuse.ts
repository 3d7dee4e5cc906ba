import { resolve } from 'node:path';
import * as workerThreads from 'node:worker_threads';
import type { Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { formatConfigWarnings } from './config/index.js';
import type { ResolvedConfig } from './config/index.js';
import { Diagnostics } from './core/diagnostics.js';
import type { ContextMode, WindowProfile } from './core/window.js';
import type { SpanCounterSource } from './core/counters.js';
import {
  detectContextMode,
  FrameBinder,
  HookBinder,
  sampleOfSpan,
  SpanfuseContextManager,
} from './context/index.js';
import type { SamplerBinder } from './context/index.js';
import { WallSampler } from './sampler/index.js';
import type { RawWindow, ThreadIdentity } from './sampler/index.js';
import { selfTimeTotals } from './core/self-time.js';
import type { SelfTime } from './core/self-time.js';
import { runSliced, runSync, sliceRunning, staged, stepEvery } from './core/slices.js';
import { ScavengeWait } from './core/scavenge-wait.js';
import type { Steps } from './core/slices.js';
import { findLabel } from './core/pprof.js';
import { lazyRequire, REQUIRE_ESM } from './core/require-esm.js';
import { withinDeadline } from './export/deadline.js';
import { createExporters, createScrubber } from './export/factory.js';
import { ExportPipeline } from './export/pipeline.js';
import type { ExportPipelineStats } from './export/pipeline.js';
import type { Scrubber } from './profile/scrubber.js';
import { labelTailSteps, TailSpanProcessor } from './exemplars/index.js';
import type { TailStats } from './exemplars/index.js';
import { addGcTotalsSteps } from './heap/gc.js';
import type { HeapStage } from './heap/stage.js';
import type * as HeapStageModule from './heap/stage.js';
import { currentThreadIdentity } from './runtime/threads.js';
import { createThreadSpanCounters } from './runtime/thread-span-counters.js';
import type { RuntimeSignals, RuntimeStats } from './runtime/runtime-signals.js';
import type * as RuntimeSignalsModule from './runtime/runtime-signals.js';
import type { ThreadContextPublisher } from './runtime/thread-context.js';
import {
  bypassWhenStopped,
  FusionMonitor,
  installTracing,
  JsonlSpanProcessor,
  LocalRootProcessor,
  armAutoInstrumentation,
  noopSpanProcessor,
} from './tracing/index.js';
import type {
  AutoInstrumentation,
  AutoInstrumentState,
  ContextManagerState,
  FusionStats,
  TracerProviderState,
  TracingInstallation,
} from './tracing/index.js';
import { spanfuseVersion } from './core/version.js';
// The endpoint (and the flamegraph code behind it) is loaded only when a port is set.
import type { DebugEndpoint, DebugEndpointOptions } from './debug/endpoint.js';
import { WindowRing } from './debug/window-ring.js';
import { startWorkerSupport, workerSafeExporter, WorkerJsonlSpanProcessor } from './workers/index.js';
import { ContextLossStage } from './context-loss/index.js';
import { spanSlots } from './context/span-slots.js';
import type { SpanSlotStats } from './context/span-slots.js';
import type { ContextLossStats } from './context-loss/index.js';
import type { FlushStats, WorkerSupport } from './workers/index.js';

/**
 * The stages only the main thread runs (the runtime signals) or only an
 * enabled heap profile needs, loaded when constructed: a worker's preload
 * then does not load their ~25 modules, ~35 ms of every worker's start on
 * this 2-core VM.
 */
const requireStage = lazyRequire(import.meta.url);

/** Closed windows waiting for their sliced build at most; older ones are finished synchronously. */
const MAX_PENDING_BUILDS = 2;
/**
 * A window closed by the timer is built after the thread's next scavenge, or
 * after this long (at most a quarter of the window), so that it is built and
 * written between two scavenges and none of it is copied (ScavengeWait).
 */
const MAX_SCAVENGE_WAIT_MS = 2500;

/** Where the main thread leaves its thread-state table for workers (worker_threads environment data). */
const SHARED_STATE_KEY = 'spanfuse.runtime.thread-state';
/** Window attributes: ms of spanfuse's own work on the thread since the previous window's figures (core/self-time.ts). */
const ATTR_SELF_SLICED_MS = 'profiler.self.sliced_ms';
const ATTR_SELF_STOPS_MS = 'profiler.self.stops_ms';
const ATTR_SELF_PASSES_MS = 'profiler.self.passes_ms';

function round1(ms: number): number {
  return Math.round(ms * 10) / 10;
}

export interface SpanfuseStats {
  readonly running: boolean;
  readonly mode: ContextMode;
  readonly thread: ThreadIdentity;
  readonly windows: { readonly collected: number; readonly samples: number; readonly labelledSamples: number };
  readonly currentProfileId: string;
  readonly contextSwitches: number;
  /** AsyncContextFrame mode: the table of span ids the sampler's holders carry (span-slots.ts). */
  readonly spanSlots: SpanSlotStats;
  readonly tracerProvider: TracerProviderState;
  readonly contextManager: ContextManagerState;
  /** Whether the spans that label samples pass spanfuse's span processor (tails can be marked). */
  readonly fusion: FusionStats & { readonly autoInstrument: AutoInstrumentState };
  readonly outputDir: string;
  readonly export: ExportPipelineStats;
  readonly spans: { readonly written: number; readonly dropped: number } | undefined;
  readonly tail: TailStats | undefined;
  readonly heap: { readonly kind: string; readonly backend: string; readonly intervalBytes: number } | undefined;
  readonly runtime: RuntimeStats | undefined;
  readonly counters: Readonly<Record<string, number>>;
  /** URL of the local debug endpoint, once it listens (`debug.port`). */
  readonly debugEndpoint: string | undefined;
  /** Main thread: windows workers wrote when asked before terminate(). */
  readonly workerFlush: FlushStats | undefined;
  /** CPU samples of this thread with no span while spans were in flight. */
  readonly contextLoss: ContextLossStats;
  /**
   * spanfuse's own periodic work on this thread so far (ms): window builds,
   * scrubbing and encoding; native profiler stops; thread-state passes.
   */
  readonly selfTime: SelfTime;
}

/** The running profiler: returned by `start()`. */
export class Spanfuse {
  readonly config: ResolvedConfig;
  readonly mode: ContextMode;
  readonly #diag = new Diagnostics();
  #selfMark = selfTimeTotals();
  readonly #fusion = new FusionMonitor(this.#diag);
  #autoInstrument: AutoInstrumentation | undefined;
  readonly #contextManager: SpanfuseContextManager;
  readonly #binder: SamplerBinder;
  readonly #sampler: WallSampler;
  readonly #pipeline: ExportPipeline;
  readonly #spansFile: JsonlSpanProcessor | undefined;
  readonly #tracing: TracingInstallation;
  readonly #heap: HeapStage | undefined;
  readonly #runtime: RuntimeSignals | undefined;
  /** Every TailSpanProcessor handed out; each hears of every closed window. */
  readonly #tails: TailSpanProcessor[] = [];
  readonly #ownTail: TailSpanProcessor | undefined;
  readonly #scrubber: Scrubber;
  readonly #debugOptions: DebugEndpointOptions | undefined;
  #debug: DebugEndpoint | undefined;
  /** The endpoint module being loaded and started (set by start(), once). */
  #debugStarting: Promise<void> | undefined;
  #debugClosed = false;
  #threadContext: ThreadContextPublisher | undefined;
  #stopWorkerCounters: (() => void) | undefined;
  /** The runtime's span counters, once its threads and readers are up. */
  #spanCounters: SpanCounterSource | undefined;
  readonly #lazyCounters: SpanCounterSource = {
    begin: () => this.#spanCounters?.begin(),
    end: (token) => (token === undefined || this.#spanCounters === undefined ? {} : this.#spanCounters.end(token)),
  };
  readonly #thread: ThreadIdentity;
  readonly #outputDir: string;
  #timer: NodeJS.Timeout | undefined;
  /** Closed windows whose profiles are still being built, oldest first. */
  readonly #building: { readonly profileId: string; readonly steps: Steps<WindowProfile | undefined> }[] = [];
  /** The window the timer closed last waits for a scavenge before its build (see ScavengeWait). */
  #buildAfterScavenge = false;
  readonly #scavengeWait = new ScavengeWait();
  #buildPump: Promise<void> | undefined;
  #shutdown: Promise<void> | undefined;
  #windows = 0;
  #samples = 0;
  #labelled = 0;
  #workers: WorkerSupport | undefined;
  /** A window is being collected: a worker flush request must not re-enter. */
  #collecting = false;
  readonly #contextLoss = new ContextLossStage();
  readonly #onBeforeExit = (): void => {
    void this.shutdown();
  };
  readonly #onExit = (): void => {
    this.#exitSync();
  };
  #exited = false;
  #shutdownDone = false;
  /** Signals whose default action (end the process) spanfuse precedes with a synchronous write. */
  #signals: NodeJS.Signals[] = [];
  readonly #onSignal = (signal: NodeJS.Signals): void => {
    // The app handles the signal itself: it decides what happens (calling
    // `shutdown()` in its handler is the documented way). Checked now, not at
    // start, because apps install handlers late.
    if (process.listenerCount(signal) > 1) return;
    try {
      this.#exitSync();
    } finally {
      this.#removeSignalListeners();
      // No listener is left, so the default action applies again: the process
      // ends exactly as it would have without spanfuse (status 128 + signal).
      process.kill(process.pid, signal);
    }
  };

  constructor(config: ResolvedConfig) {
    this.config = config;
    this.#outputDir = resolve(config.outputDir);
    this.mode = detectContextMode();
    if (config.warnings.length > 0) this.#diag.warnOnce('config', formatConfigWarnings(config.warnings));
    // Node >= 24 tells a worker its name; older versions fall back to the id.
    const threadName = (workerThreads as { threadName?: unknown }).threadName;
    this.#thread = currentThreadIdentity(typeof threadName === 'string' ? { name: threadName } : {});
    // The runtime stage watches the whole process: one instance, on the main thread.
    this.#runtime = workerThreads.isMainThread ? this.#newRuntime(config) : undefined;
    this.#contextManager = new SpanfuseContextManager();
    this.#watchFusion();
    this.#binder =
      this.mode === 'async-context-frame'
        ? new FrameBinder()
        : new HookBinder(() => this.#contextManager.activeSampleOrUndefined(), {
            clearBetweenCallbacks: config.clearContextBetweenCallbacks,
          });
    this.#sampler = new WallSampler({
      samplingIntervalMicros: config.samplingIntervalMicros,
      collectCpuTime: config.collectCpuTime,
      mode: this.mode,
      thread: this.#thread,
      windowMs: config.windowMs,
      onStuckProfiler: () => this.#diag.count('sampler.v8_stuck_restart'),
      onPossiblyStuckProfiler: () => this.#diag.count('sampler.v8_stuck_possible'),
    });
    const exporters = createExporters(config.export, {
      outputDir: this.#outputDir,
      resource: config.resourceAttributes,
      serviceName: config.serviceName,
      diagnostics: this.#diag,
    });
    this.#scrubber = createScrubber(config.export);
    // The debug endpoint (main thread only) reads scrubbed windows as one more exporter.
    const ring = config.debug.enabled && workerThreads.isMainThread ? new WindowRing() : undefined;
    if (ring !== undefined) {
      exporters.push(ring);
      this.#debugOptions = { config: config.debug, ring, closeWindow: () => void this.#closeWindow(true), windowMs: config.windowMs, diagnostics: this.#diag };
    }
    this.#pipeline = new ExportPipeline({
      exporters: workerThreads.isMainThread ? exporters : exporters.map(workerSafeExporter),
      scrubber: this.#scrubber,
      diagnostics: this.#diag,
    });
    this.#heap = this.#newHeap(config);
    this.#spansFile = config.spansFile
      ? new (workerThreads.isMainThread ? JsonlSpanProcessor : WorkerJsonlSpanProcessor)({
          dir: this.#outputDir,
          maxFileBytes: config.spansFileMaxBytes,
          oneIn: config.spansFileOneIn,
          diagnostics: this.#diag,
        })
      : undefined;
    const ownProcessors: SpanProcessor[] = [this.#fusion.noteProcessor(false), this.#localRoot(), this.#contextLoss.spans];
    const sink = this.#spansFile ?? noopSpanProcessor;
    this.#ownTail = this.#newTail(sink);
    ownProcessors.push(this.#ownTail ?? sink);
    const resourceAttributes = {
      ...config.resourceAttributes,
      'service.name': config.serviceName,
      'telemetry.distro.name': 'spanfuse',
      'telemetry.distro.version': spanfuseVersion(),
    };
    this.#tracing = installTracing({
      contextManager: this.#contextManager,
      provideTracer: config.tracerProvider === 'auto',
      resourceAttributes,
      spanProcessors: ownProcessors,
      onHandover: () => {
        this.#fusion.rearm();
        this.#watchFusion();
      },
    });
    if (this.#tracing.appProviderFirst) this.#fusion.providerRegisteredBefore();
    const tracing = this.#tracing;
    this.#autoInstrument = armAutoInstrumentation(config.autoInstrument, {
      provider: tracing.delegate?.quietAfterHandover(),
      spanfuseServes: () => tracing.tracerProvider() === 'spanfuse',
      diag: this.#diag,
    });
    if (this.#runtime === undefined) {
      // A worker: its span counters read the main thread's thread-state table.
      const shared = workerThreads.getEnvironmentData(SHARED_STATE_KEY);
      const counters = createThreadSpanCounters(shared instanceof SharedArrayBuffer ? shared : undefined);
      this.#spanCounters = counters.source;
      this.#stopWorkerCounters = () => counters.stop();
    } else {
      // start() publishes the contexts synchronously, then starts its threads.
      const runtime = this.#runtime;
      runtime.start({ resource: resourceAttributes }).catch((err: unknown) => this.#diag.error('runtime.start', err));
      // start() set up everything span counters read before its first await:
      // the first spans get them too.
      this.#spanCounters = runtime.spanCounters();
      // Workers started from now on find the thread-state table here.
      const shared = runtime.sharedState();
      if (shared !== undefined) workerThreads.setEnvironmentData(SHARED_STATE_KEY, shared);
      const tc = this.#runtime.threadContext();
      if (tc?.supported === true && this.mode === 'async-context-frame') {
        this.#threadContext = tc;
        this.#contextManager.setThreadContext(tc);
      }
    }
  }

  /**
   * The runtime signals (main thread). Without require(esm) spanfuse runs
   * without them, and without worker threads (workers/inject.ts), and says so.
   */
  #newRuntime(config: ResolvedConfig): RuntimeSignals | undefined {
    if (!REQUIRE_ESM) {
      this.#diag.warnOnce(
        'require_esm',
        'spanfuse: require(esm) is turned off (--no-experimental-require-module): no runtime signals (thread states, kernel counters, process context) and no profiles of worker threads',
      );
      return undefined;
    }
    return new (requireStage<typeof RuntimeSignalsModule>('./runtime/runtime-signals.js', 'the runtime stage').RuntimeSignals)(config.runtime, this.#diag);
  }

  /** The heap stage when the heap profile is on; without require(esm), off with a warning. */
  #newHeap(config: ResolvedConfig): HeapStage | undefined {
    if (!config.heap.enabled) return undefined;
    if (!REQUIRE_ESM) {
      this.#diag.warnOnce('heap.require_esm', 'spanfuse: the heap profile is off: it needs require(esm), which --no-experimental-require-module turns off');
      return undefined;
    }
    return requireStage<typeof HeapStageModule>('./heap/stage.js', 'the heap profile').HeapStage.start(config.heap, this.#diag);
  }

  /** Begin sampling. Called by `start()`. */
  begin(): void {
    this.#sampler.start();
    this.#binder.enable();
    this.#contextManager.setBinder(this.#binder);
    this.#timer = setInterval(() => void this.#closeWindow(true, true), this.config.windowMs);
    this.#timer.unref();
    process.once('beforeExit', this.#onBeforeExit);
    // Before @datadog/pprof's own exit listener, which would discard the window.
    process.prependOnceListener('exit', this.#onExit);
    if (workerThreads.isMainThread) {
      // (Node resets every inherited signal disposition at start-up, so
      // without this listener these signals always end the process.)
      this.#signals = ['SIGTERM', 'SIGINT'];
      for (const sig of this.#signals) process.on(sig, this.#onSignal);
    }
    this.#startDebug();
    this.#workers = startWorkerSupport(() => {
      if (this.#shutdown !== undefined) return 'empty';
      // The request interrupted this worker's own window work (a close, or
      // a slice of export work): that work goes on first, without being
      // entered again from here; the main thread asks again.
      if (this.#collecting || sliceRunning()) return 'busy';
      // Asked 'now' (a worker whose loop took no turn), this runs wherever
      // the inspector interrupted the worker's JavaScript,
      // possibly inside a context manager's `with()` that has checked the
      // sampler and is about to enter its frame: the native profiler stays
      // started (restart), so that call cannot meet a stopped profiler.
      this.#exitSync(true);
      return 'wrote';
    }, this.config.workerFlushTimeoutMs);
  }

  #removeSignalListeners(): void {
    for (const sig of this.#signals) process.removeListener(sig, this.#onSignal);
    this.#signals = [];
  }

  /**
   * The span processor for an app that runs its own tracer provider. Wrap
   * the processor that exports your spans and put the result in the
   * provider's `spanProcessors`:
   * `spanProcessors: [sf.spanProcessor(new BatchSpanProcessor(exporter))]`.
   * Every span gets its local root; spans in the latency tail of their
   * operation are marked, held until their window closes, enriched with the
   * figures of their samples and then passed on to `downstream`. Without
   * `downstream`, spans are only marked (other processors see the marks).
   */
  spanProcessor(downstream?: SpanProcessor): SpanProcessor {
    const local = [this.#fusion.noteProcessor(true), this.#localRoot(), this.#contextLoss.spans];
    const tail = this.#newTail(downstream ?? noopSpanProcessor);
    if (tail === undefined) return composite([...local, ...(downstream ? [downstream] : [])]);
    const fused = composite([...local, tail]);
    return downstream === undefined ? fused : bypassWhenStopped(() => this.#shutdown !== undefined, fused, downstream);
  }

  /** Until the fusion check has its verdict it sees every span entered; then it unhooks itself. */
  #watchFusion(): void {
    if (!this.#fusion.watching) return;
    this.#contextManager.setSpanWatcher((span) => {
      if (this.#fusion.watching) this.#fusion.check(span);
      else this.#contextManager.setSpanWatcher(undefined);
    });
  }

  #localRoot(): LocalRootProcessor {
    // Ended spans drop out of the thread-context record at once (OTEP-4947).
    return new LocalRootProcessor((span) => this.#threadContext?.end(sampleOfSpan(span as unknown as Span)));
  }

  #newTail(downstream: SpanProcessor): TailSpanProcessor | undefined {
    if (!this.config.tail.enabled) return undefined;
    const tail = new TailSpanProcessor({
      downstream,
      settings: this.config.tail,
      windowMs: this.config.windowMs,
      currentProfileId: () => this.#sampler.currentProfileId,
      pendingProfileIds: () => this.#building.map((b) => b.profileId),
      counters: this.#lazyCounters,
      retention: this.#pipeline,
      // Frame names leave on spans, to the trace backend: scrub them too.
      scrubText: (text: string) => this.#scrubber.scrubText(text),
      diagnostics: this.#diag,
    });
    this.#tails.push(tail);
    return tail;
  }

  /** The context manager spanfuse registered globally. */
  get contextManager(): SpanfuseContextManager {
    return this.#contextManager;
  }

  /** Id of the window being collected now. */
  get currentProfileId(): string {
    return this.#sampler.currentProfileId;
  }

  /**
   * Close the current window now and wait until it and the pending spans are
   * delivered, or until `deadlineMs` passes (an exporter that keeps retrying
   * must not hold the caller). True when everything was delivered in time.
   */
  async flush(deadlineMs = 10_000): Promise<boolean> {
    if (this.#shutdown !== undefined) {
      await this.#shutdown;
      return true;
    }
    const flushed = (async () => {
      await this.#closeWindow(true);
      await Promise.all([this.#pipeline.flush(), this.#spansFile?.forceFlush()]);
    })();
    return withinDeadline(flushed, deadlineMs);
  }

  /** Stop sampling, write the last window and pending spans. Idempotent. */
  shutdown(deadlineMs = 5000): Promise<void> {
    this.#shutdown ??= this.#doShutdown(deadlineMs);
    return this.#shutdown;
  }

  stats(): SpanfuseStats {
    return {
      running: this.#sampler.running,
      mode: this.mode,
      thread: this.#thread,
      windows: { collected: this.#windows, samples: this.#samples, labelledSamples: this.#labelled },
      currentProfileId: this.#sampler.currentProfileId,
      contextSwitches: this.#binder.switches(),
      spanSlots: spanSlots.stats(),
      tracerProvider: this.#tracing.tracerProvider(),
      contextManager: this.#tracing.contextManager,
      fusion: { ...this.#fusion.stats(this.#tracing.tracerProvider()), autoInstrument: this.#autoInstrument?.state() ?? 'none' },
      outputDir: this.#outputDir,
      export: this.#pipeline.stats(),
      spans: this.#spansFile?.stats(),
      tail: this.#ownTail?.stats(),
      heap:
        this.#heap === undefined
          ? undefined
          : { kind: this.#heap.sampler.kind, backend: this.#heap.sampler.backend, intervalBytes: this.#heap.sampler.intervalBytes },
      runtime: this.#runtime?.stats(),
      counters: this.#diag.counters(),
      debugEndpoint: this.#debug?.url,
      workerFlush: this.#workers?.stats(),
      contextLoss: this.#contextLoss.stats(),
      selfTime: selfTimeTotals(),
    };
  }

  async #doShutdown(deadlineMs: number): Promise<void> {
    // Exports in flight do not hold the event loop (their sockets and timers
    // are unref'd); this one timer keeps a draining process alive until the
    // deadline at most, so a natural exit is bounded by it.
    const hold = setTimeout(() => undefined, Math.max(0, deadlineMs) + 100);
    try {
      await this.#shutdownSteps(deadlineMs);
    } finally {
      clearTimeout(hold);
      this.#shutdownDone = true;
      this.#workers?.ended();
    }
  }

  #startDebug(): void {
    const options = this.#debugOptions;
    if (options === undefined || this.#debugStarting !== undefined) return;
    this.#debugStarting = import('./debug/endpoint.js')
      .then(async ({ DebugEndpoint: Endpoint }) => {
        if (this.#debugClosed) return;
        this.#debug = new Endpoint(options);
        await this.#debug.start();
      })
      .catch((err: unknown) => this.#diag.error('debug.endpoint', err));
  }

  /** Stop the endpoint, or keep it from starting when its module is still loading. */
  #stopDebug(): Promise<void> | undefined {
    this.#debugClosed = true;
    const debug = this.#debug;
    if (debug !== undefined) return debug.stop();
    return this.#debugStarting?.then(() => this.#debug?.stop());
  }

  async #shutdownSteps(deadlineMs: number): Promise<void> {
    const debugStopped = this.#stopDebug();
    this.#stopTimers();
    await this.#closeWindow(false);
    this.#heap?.stop();
    // Held tail spans go out (enriched from the last window) before the span file closes.
    // The app's exporters stay open: its provider shuts them down, not spanfuse.
    const ownTail = this.#ownTail;
    await Promise.all(
      this.#tails.map((t) =>
        (t === ownTail ? t.shutdown() : Promise.resolve().then(() => void t.releaseAllSync())).catch((err: unknown) =>
          this.#diag.error('tail.shutdown', err),
        ),
      ),
    );
    await Promise.all([
      this.#pipeline.shutdown(deadlineMs),
      this.#tracing.uninstall().catch((err: unknown) => this.#diag.error('tracing.shutdown', err)),
      this.#spansFile?.shutdown(),
      this.#runtime?.stop().catch((err: unknown) => this.#diag.error('runtime.stop', err)),
    ]);
    this.#stopWorkerCounters?.();
    await debugStopped;
  }

  #stopTimers(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#scavengeWait.release();
    process.removeListener('beforeExit', this.#onBeforeExit);
    this.#removeSignalListeners();
    this.#contextManager.setBinder(undefined);
    this.#contextManager.setThreadContext(undefined);
    this.#binder.disable();
    this.#workers?.stop();
  }

  /**
   * Close the window now (the native profile stops and restarts at once) and
   * build it, with every stage's part, in slices of about 2 ms spread over
   * event-loop turns; then hand it to the export pipeline. Windows are built
   * one at a time, in order. Resolves when every closed window is submitted.
   */
  #closeWindow(restart: boolean, afterScavenge = false): Promise<void> {
    // Anyone else (flush, shutdown, the debug endpoint) wants the window now.
    if (!afterScavenge) this.#scavengeWait.release();
    if (!workerThreads.isMainThread) {
      // A worker builds its window at once: a flush asked for by terminate()
      // can interrupt it at any point and must find no half-built window.
      this.#closeWindowSync(restart);
      return Promise.resolve();
    }
    try {
      // The last stop runs shielded so the caller's frame keeps its context.
      const raw = restart ? this.#sampler.close(true) : this.#contextManager.shieldFrame(() => this.#sampler.close(false));
      if (raw !== undefined) {
        this.#building.push({ profileId: raw.profileId, steps: this.#windowSteps(raw) });
        this.#buildAfterScavenge = afterScavenge;
      }
      // Builds that fall behind (a starved loop) are finished at once rather
      // than piling up: memory stays bounded, no window is lost.
      while (this.#building.length > MAX_PENDING_BUILDS) {
        const steps = this.#building.shift()?.steps;
        const w = steps === undefined ? undefined : runSync(steps);
        if (w !== undefined) this.#pipeline.submit(w);
        this.#diag.count('sampler.build_behind');
      }
    } catch (err) {
      this.#diag.error('sampler.collect', err);
    }
    this.#buildPump ??= this.#runBuilds();
    return this.#buildPump;
  }

  /** Close and build a window in one go (worker threads; the exit path has its own). */
  #closeWindowSync(restart: boolean): void {
    if (this.#collecting) return;
    this.#collecting = true;
    try {
      const raw = restart ? this.#sampler.close(true) : this.#contextManager.shieldFrame(() => this.#sampler.close(false));
      const w = raw === undefined ? undefined : runSync(this.#windowSteps(raw));
      // The flush sample of the next window counts CPU from here.
      if (restart) this.#workers?.windowOpened();
      if (w !== undefined) this.#pipeline.submit(w);
    } catch (err) {
      this.#diag.error('sampler.collect', err);
    } finally {
      this.#collecting = false;
    }
  }

  async #runBuilds(): Promise<void> {
    try {
      // Never build in the caller's turn (the window timer's callback).
      await new Promise<void>((resolve) => setImmediate(resolve));
      for (;;) {
        if (this.#buildAfterScavenge) {
          this.#buildAfterScavenge = false;
          await this.#scavengeWait.wait(Math.min(MAX_SCAVENGE_WAIT_MS, this.config.windowMs / 4));
        }
        const next = this.#building[0];
        if (next === undefined) break;
        const w = await runSliced(next.steps);
        // exitSync may have drained the queue while this one was waiting.
        if (this.#building[0] !== next) continue;
        this.#building.shift();
        if (w !== undefined) this.#pipeline.submit(w);
      }
    } catch (err) {
      this.#diag.error('sampler.build', err);
    } finally {
      this.#buildPump = undefined;
    }
  }

  /** Build one closed window: its wall profile, then what the other stages add. */
  *#windowSteps(raw: RawWindow): Steps<WindowProfile | undefined> {
    let w: WindowProfile;
    try {
      w = yield* staged('assemble', this.#sampler.windowSteps(raw));
    } catch (err) {
      this.#diag.error('sampler.collect', err);
      return undefined;
    }
    try {
      // A worker flushed before terminate(): its window gets the CPU since its last sample.
      this.#workers?.windowClosed(w);
    } catch (err) {
      this.#diag.error('workers.window', err);
    }
    this.#windows++;
    try {
      yield* staged('count', this.#countSteps(w));
    } catch (err) {
      this.#diag.error('sampler.count', err);
    }
    yield* this.#fillSteps(w);
    return w;
  }

  /** Add what the other stages know of the window; each fails on its own. */
  *#fillSteps(w: WindowProfile): Steps<void> {
    try {
      if (this.#runtime !== undefined) {
        const r = yield* staged('runtime', this.#runtime.collectWindowSteps(w.startUnixNs, w.endUnixNs));
        Object.assign(w.attributes, r.attributes);
        if (r.offCpu !== undefined) w.offCpu = r.offCpu as unknown as NonNullable<WindowProfile['offCpu']>;
      }
    } catch (err) {
      this.#diag.error('runtime.window', err);
    }
    // spanfuse's own periodic work on this thread since the previous
    // window's figures (for the sliced work: the rest of that window's build,
    // its scrubbing and encoding, this window's chunk packing and build so
    // far), for users who watch what the profiler costs them.
    const self = selfTimeTotals();
    const mark = this.#selfMark;
    w.attributes[ATTR_SELF_SLICED_MS] = round1(self.slicedMs - mark.slicedMs);
    w.attributes[ATTR_SELF_STOPS_MS] = round1(self.stopsMs - mark.stopsMs);
    if (self.passesMs > 0) w.attributes[ATTR_SELF_PASSES_MS] = round1(self.passesMs - mark.passesMs);
    this.#selfMark = self;
    yield;
    yield* staged('heap', this.#heap !== undefined ? this.#heap.fillSteps(w) : addGcTotalsSteps(w, this.#diag));
    yield;
    try {
      yield* staged('context_loss', this.#contextLoss.fillSteps(w));
    } catch (err) {
      this.#diag.error('context_loss.window', err);
    }
    yield;
    for (const t of this.#tails) {
      try {
        yield* staged('tail', t.windowClosedSteps(w));
      } catch (err) {
        this.#diag.error('tail.window', err);
      }
    }
    try {
      yield* staged('tail', labelTailSteps(w));
    } catch (err) {
      this.#diag.error('tail.label', err);
    }
    // pprof has no attribute table: what the machine does not offer, and why,
    // goes in comments (OTLP carries all window attributes).
    for (const [k, v] of Object.entries(w.attributes)) {
      if (k.startsWith('profiler.unsupported.')) w.wall.comment.push(w.wall.stringTable.dedup(`${k}=${String(v)}`));
    }
  }

  *#countSteps(w: WindowProfile): Steps<void> {
    const strings = w.wall.stringTable.strings;
    const spanKey = strings.indexOf('span_id');
    // Indexed (no iterator result or closure per sample in this
    // once-per-window, interpreted code).
    const samples = w.wall.sample;
    const due = stepEvery(1024);
    for (let i = 0; i < samples.length; i++) {
      const s = samples[i] as (typeof samples)[number];
      const n = Number(s.value[0] ?? 0);
      this.#samples += n;
      if (spanKey > 0 && findLabel(s.label, spanKey) !== undefined) this.#labelled += n;
      if (due()) yield;
    }
  }

  /**
   * `process.exit()` leaves no turn of the event loop: the last window and the
   * buffered spans are written synchronously here.
   */
  #exitSync(keepSampling = false): void {
    // Also when an async shutdown is under way: what it has not written yet
    // (windows being encoded, queued, held spans) is written here.
    if (this.#exited || this.#shutdownDone) return;
    this.#exited = true;
    this.#shutdown ??= Promise.resolve();
    // Main thread: profiled workers write their open windows meanwhile (the
    // process's exit terminates them right after); waited for at the end.
    let workersWritten: (() => number) | undefined;
    if (!keepSampling) {
      try {
        workersWritten = this.#workers?.exiting();
      } catch (err) {
        this.#diag.error('workers.exit', err);
      }
    }
    void this.#stopDebug();
    this.#stopTimers();
    // Windows still being built are finished now, in order, then the last one.
    // One at a time: while one is built, the ones after it are still queued,
    // and the tail stage keeps the spans held for them.
    for (let next = this.#building.shift(); next !== undefined; next = this.#building.shift()) {
      const w = runSync(next.steps);
      if (w !== undefined) this.#pipeline.submit(w);
    }
    let last: WindowProfile | undefined;
    try {
      const raw = keepSampling
        ? this.#sampler.close(true)
        : this.#contextManager.shieldFrame(() => this.#sampler.close(false));
      if (raw !== undefined) last = runSync(this.#windowSteps(raw));
    } catch (err) {
      this.#diag.error('sampler.collect', err);
    }
    for (const t of this.#tails) {
      try {
        t.releaseAllSync();
      } catch (err) {
        this.#diag.error('tail.exit', err);
      }
    }
    this.#pipeline.exitSync(last);
    this.#spansFile?.flushSync();
    try {
      workersWritten?.();
      // A worker's own exit wrote its window: a terminate() or the process's
      // exit that comes now has nothing to ask it for, and does not wait.
      if (!keepSampling) this.#workers?.ended();
    } catch (err) {
      this.#diag.error('workers.exit', err);
    }
  }
}

/** Fan a span out to processors in order (the SDK's own multi-processor is internal). */
function composite(list: SpanProcessor[]): SpanProcessor {
  return {
    onStart: (span, ctx) => list.forEach((p) => p.onStart(span, ctx)),
    onEnding: (span) => list.forEach((p) => p.onEnding?.(span)),
    onEnd: (span) => list.forEach((p) => p.onEnd(span)),
    forceFlush: async () => {
      await Promise.all(list.map((p) => p.forceFlush()));
    },
    shutdown: async () => {
      await Promise.all(list.map((p) => p.shutdown()));
    },
  };
}
