import { resolve } from 'node:path';
import * as workerThreads from 'node:worker_threads';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { NoopSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ResolvedConfig } from './config/index.js';
import { Diagnostics } from './core/diagnostics.js';
import type { ContextMode, WindowProfile } from './core/window.js';
import type { SpanCounterSource } from './core/counters.js';
import {
  detectContextMode,
  FrameBinder,
  HookBinder,
  SampleContextCache,
  SpanfuseContextManager,
} from './context/index.js';
import type { SamplerBinder } from './context/index.js';
import { WallSampler } from './sampler/index.js';
import type { ThreadIdentity } from './sampler/index.js';
import { createExporters, createScrubber, ExportPipeline, withinDeadline } from './export/index.js';
import type { ExportPipelineStats } from './export/index.js';
import type { Scrubber } from './profile/index.js';
import { labelTailSamples, TailSpanProcessor } from './exemplars/index.js';
import type { TailStats } from './exemplars/index.js';
import { HeapStage, addGcTotals } from './heap/index.js';
import { createThreadSpanCounters, currentThreadIdentity, RuntimeSignals } from './runtime/index.js';
import type { RuntimeStats, ThreadContextPublisher } from './runtime/index.js';
import { installTracing, JsonlSpanProcessor, LocalRootProcessor } from './tracing/index.js';
import type { TracingInstallation, TracerProviderState, ContextManagerState } from './tracing/index.js';
import { spanfuseVersion } from './core/version.js';
import { startWorkerSupport, workerSafeExporter, WorkerJsonlSpanProcessor } from './workers/index.js';
import { ContextLossStage } from './context-loss/index.js';
import type { ContextLossStats } from './context-loss/index.js';
import type { FlushStats, WorkerSupport } from './workers/index.js';

/** Where the main thread leaves its thread-state table for workers (worker_threads environment data). */
const SHARED_STATE_KEY = 'spanfuse.runtime.thread-state';

export interface SpanfuseStats {
  readonly running: boolean;
  readonly mode: ContextMode;
  readonly thread: ThreadIdentity;
  readonly windows: { readonly collected: number; readonly samples: number; readonly labelledSamples: number };
  readonly currentProfileId: string;
  readonly contextSwitches: number;
  readonly tracerProvider: TracerProviderState;
  readonly contextManager: ContextManagerState;
  readonly outputDir: string;
  readonly export: ExportPipelineStats;
  readonly spans: { readonly written: number; readonly dropped: number } | undefined;
  readonly tail: TailStats | undefined;
  readonly heap: { readonly kind: string; readonly backend: string; readonly intervalBytes: number } | undefined;
  readonly runtime: RuntimeStats | undefined;
  readonly counters: Readonly<Record<string, number>>;
  /** Main thread: windows workers wrote when asked before terminate(). */
  readonly workerFlush: FlushStats | undefined;
  /** CPU samples of this thread with no span while spans were in flight. */
  readonly contextLoss: ContextLossStats;
}

/** The running profiler: returned by `start()`. */
export class Spanfuse {
  readonly config: ResolvedConfig;
  readonly mode: ContextMode;
  readonly #diag = new Diagnostics();
  readonly #cache = new SampleContextCache();
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

  constructor(config: ResolvedConfig) {
    this.config = config;
    this.#outputDir = resolve(config.outputDir);
    this.mode = detectContextMode();
    // Node >= 24 tells a worker its name; older versions fall back to the id.
    const threadName = (workerThreads as { threadName?: unknown }).threadName;
    this.#thread = currentThreadIdentity(typeof threadName === 'string' ? { name: threadName } : {});
    // The runtime stage watches the whole process: one instance, on the main thread.
    this.#runtime = workerThreads.isMainThread ? new RuntimeSignals(config.runtime, this.#diag) : undefined;
    this.#contextManager = new SpanfuseContextManager(this.#cache);
    this.#binder =
      this.mode === 'async-context-frame'
        ? new FrameBinder()
        : new HookBinder(() => this.#contextManager.activeSample());
    this.#sampler = new WallSampler({
      samplingIntervalMicros: config.samplingIntervalMicros,
      collectCpuTime: config.collectCpuTime,
      mode: this.mode,
      thread: this.#thread,
    });
    const exporters = createExporters(config.export, {
      outputDir: this.#outputDir,
      resource: config.resourceAttributes,
      serviceName: config.serviceName,
      diagnostics: this.#diag,
    });
    this.#scrubber = createScrubber(config.export);
    this.#pipeline = new ExportPipeline({
      exporters: workerThreads.isMainThread ? exporters : exporters.map(workerSafeExporter),
      scrubber: this.#scrubber,
      diagnostics: this.#diag,
    });
    this.#heap = HeapStage.start(config.heap, this.#diag);
    this.#spansFile = config.spansFile
      ? new (workerThreads.isMainThread ? JsonlSpanProcessor : WorkerJsonlSpanProcessor)({ dir: this.#outputDir, maxFileBytes: config.spansFileMaxBytes, diagnostics: this.#diag })
      : undefined;
    const ownProcessors: SpanProcessor[] = [this.#localRoot(), this.#contextLoss.spans];
    const sink = this.#spansFile ?? new NoopSpanProcessor();
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
      resource: resourceFromAttributes(resourceAttributes),
      spanProcessors: ownProcessors,
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

  /** Begin sampling. Called by `start()`. */
  begin(): void {
    this.#sampler.start();
    this.#contextManager.setBinder(this.#binder);
    this.#binder.enable();
    this.#timer = setInterval(() => this.#closeWindow(true), this.config.windowMs);
    this.#timer.unref();
    process.once('beforeExit', this.#onBeforeExit);
    // Before @datadog/pprof's own exit listener, which would discard the window.
    process.prependOnceListener('exit', this.#onExit);
    this.#workers = startWorkerSupport(() => {
      if (this.#collecting || this.#shutdown !== undefined) return false;
      this.#exitSync();
      return true;
    });
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
    const local = this.#localRoot();
    const inFlight = this.#contextLoss.spans;
    const tail = this.#newTail(downstream ?? new NoopSpanProcessor());
    return tail === undefined ? composite([local, inFlight, ...(downstream ? [downstream] : [])]) : composite([local, inFlight, tail]);
  }

  #localRoot(): LocalRootProcessor {
    // Ended spans drop out of the thread-context record at once (OTEP-4947).
    return new LocalRootProcessor(this.#cache, (span) => this.#threadContext?.end(span.spanContext()));
  }

  #newTail(downstream: SpanProcessor): TailSpanProcessor | undefined {
    if (!this.config.tail.enabled) return undefined;
    const tail = new TailSpanProcessor({
      downstream,
      settings: this.config.tail,
      windowMs: this.config.windowMs,
      currentProfileId: () => this.#sampler.currentProfileId,
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
    this.#closeWindow(true);
    return withinDeadline(Promise.all([this.#pipeline.flush(), this.#spansFile?.forceFlush()]), deadlineMs);
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
      tracerProvider: this.#tracing.tracerProvider(),
      contextManager: this.#tracing.contextManager,
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
      workerFlush: this.#workers?.stats(),
      contextLoss: this.#contextLoss.stats(),
    };
  }

  async #doShutdown(deadlineMs: number): Promise<void> {
    this.#stopTimers();
    this.#closeWindow(false);
    this.#heap?.stop();
    // Held tail spans go out (enriched from the last window) before the span file closes.
    await Promise.all(this.#tails.map((t) => t.shutdown().catch((err: unknown) => this.#diag.error('tail.shutdown', err))));
    await Promise.all([
      this.#pipeline.shutdown(deadlineMs),
      this.#tracing.uninstall().catch((err: unknown) => this.#diag.error('tracing.shutdown', err)),
      this.#spansFile?.shutdown(),
      this.#runtime?.stop().catch((err: unknown) => this.#diag.error('runtime.stop', err)),
    ]);
    this.#stopWorkerCounters?.();
  }

  #stopTimers(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    process.removeListener('beforeExit', this.#onBeforeExit);
    this.#contextManager.setBinder(undefined);
    this.#contextManager.setThreadContext(undefined);
    this.#binder.disable();
    this.#workers?.stop();
  }

  #closeWindow(restart: boolean): void {
    const w = this.#collect(restart);
    if (w !== undefined) this.#pipeline.submit(w);
  }

  #collect(restart: boolean): WindowProfile | undefined {
    if (this.#collecting) return undefined;
    this.#collecting = true;
    try {
      const w = this.#sampler.rotate(restart);
      if (w === undefined) return undefined;
      this.#workerWindow(w, restart);
      this.#windows++;
      this.#count(w);
      this.#fill(w);
      return w;
    } catch (err) {
      this.#diag.error('sampler.collect', err);
      return undefined;
    } finally {
      this.#collecting = false;
    }
  }

  #workerWindow(w: WindowProfile, restart: boolean): void {
    try {
      this.#workers?.windowClosed(w);
      if (restart) this.#workers?.windowOpened();
    } catch (err) {
      this.#diag.error('workers.window', err);
    }
  }

  /** Add what the other stages know of the window; each fails on its own. */
  #fill(w: WindowProfile): void {
    try {
      if (this.#runtime !== undefined) {
        const r = this.#runtime.collectWindow(w.startUnixNs, w.endUnixNs);
        Object.assign(w.attributes, r.attributes);
        if (r.offCpu !== undefined) w.offCpu = r.offCpu as unknown as NonNullable<WindowProfile['offCpu']>;
      }
    } catch (err) {
      this.#diag.error('runtime.window', err);
    }
    if (this.#heap !== undefined) this.#heap.fill(w);
    else addGcTotals(w, this.#diag);
    try {
      this.#contextLoss.fill(w);
    } catch (err) {
      this.#diag.error('context_loss.window', err);
    }
    for (const t of this.#tails) {
      try {
        t.onWindowClosed(w);
      } catch (err) {
        this.#diag.error('tail.window', err);
      }
    }
    try {
      labelTailSamples(w);
    } catch (err) {
      this.#diag.error('tail.label', err);
    }
    // pprof has no attribute table: what the machine does not offer, and why,
    // goes in comments (OTLP carries all window attributes).
    for (const [k, v] of Object.entries(w.attributes)) {
      if (k.startsWith('profiler.unsupported.')) w.wall.comment.push(w.wall.stringTable.dedup(`${k}=${String(v)}`));
    }
  }

  #count(w: WindowProfile): void {
    const strings = w.wall.stringTable.strings;
    const spanKey = strings.indexOf('span_id');
    for (const s of w.wall.sample) {
      const n = Number(s.value[0] ?? 0);
      this.#samples += n;
      if (spanKey > 0 && s.label.some((l) => Number(l.key) === spanKey)) this.#labelled += n;
    }
  }

  /**
   * `process.exit()` leaves no turn of the event loop: the last window and the
   * buffered spans are written synchronously here.
   */
  #exitSync(): void {
    if (this.#shutdown !== undefined) return;
    this.#shutdown = Promise.resolve();
    this.#stopTimers();
    const last = this.#collect(false);
    for (const t of this.#tails) {
      try {
        t.releaseAllSync();
      } catch (err) {
        this.#diag.error('tail.exit', err);
      }
    }
    this.#pipeline.exitSync(last);
    this.#spansFile?.flushSync();
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
