import { gzipSync } from 'node:zlib';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isMainThread, threadId } from 'node:worker_threads';
import { getNativeThreadId } from '@datadog/pprof';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ResolvedConfig } from './config/index.js';
import { Diagnostics, describe } from './core/diagnostics.js';
import type { ContextMode, WindowProfile } from './core/window.js';
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
import { ExportPipeline, FileExporter, windowFileName } from './export/index.js';
import type { ExportPipelineStats } from './export/index.js';
import { installTracing, JsonlSpanProcessor, LocalRootProcessor } from './tracing/index.js';
import type { TracingInstallation, TracerProviderState, ContextManagerState } from './tracing/index.js';
import { VERSION } from './version.js';

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
  readonly counters: Readonly<Record<string, number>>;
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
  readonly #thread: ThreadIdentity;
  readonly #outputDir: string;
  #timer: NodeJS.Timeout | undefined;
  #shutdown: Promise<void> | undefined;
  #windows = 0;
  #samples = 0;
  #labelled = 0;
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
    this.#thread = currentThread();
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
    this.#pipeline = new ExportPipeline({
      exporters: [new FileExporter({ dir: this.#outputDir, diagnostics: this.#diag })],
      diagnostics: this.#diag,
    });
    this.#spansFile = config.spansFile
      ? new JsonlSpanProcessor({ dir: this.#outputDir, maxFileBytes: config.spansFileMaxBytes, diagnostics: this.#diag })
      : undefined;
    const resource = resourceFromAttributes({
      ...config.resourceAttributes,
      'service.name': config.serviceName,
      'telemetry.distro.name': 'spanfuse',
      'telemetry.distro.version': VERSION,
    });
    this.#tracing = installTracing({
      contextManager: this.#contextManager,
      provideTracer: config.tracerProvider === 'auto',
      resource,
      spanProcessors: this.#ownProcessors(),
    });
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
  }

  /**
   * The span processor for an app that runs its own tracer provider: put it
   * first in the provider's `spanProcessors` so spans get their local roots
   * (and tail marking). It does not write `spans.jsonl`: the app exports its
   * spans itself.
   */
  spanProcessor(): SpanProcessor {
    return new LocalRootProcessor(this.#cache);
  }

  /** Processors of the provider spanfuse installs when the app has none. */
  #ownProcessors(): SpanProcessor[] {
    const list: SpanProcessor[] = [this.spanProcessor()];
    if (this.#spansFile !== undefined) list.push(this.#spansFile);
    return list;
  }

  /** The context manager spanfuse registered globally. */
  get contextManager(): SpanfuseContextManager {
    return this.#contextManager;
  }

  /** Id of the window being collected now. */
  get currentProfileId(): string {
    return this.#sampler.currentProfileId;
  }

  /** Close the current window now and wait until it and pending spans are written. */
  async flush(): Promise<void> {
    if (this.#shutdown !== undefined) return this.#shutdown;
    this.#closeWindow(true);
    await Promise.all([this.#pipeline.flush(), this.#spansFile?.forceFlush()]);
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
      counters: this.#diag.counters(),
    };
  }

  async #doShutdown(deadlineMs: number): Promise<void> {
    this.#stopTimers();
    const last = this.#collect(false);
    if (last !== undefined) this.#pipeline.submit(last);
    await Promise.all([
      this.#pipeline.shutdown(deadlineMs),
      this.#tracing.uninstall().catch((err: unknown) => this.#diag.error('tracing.shutdown', err)),
      this.#spansFile?.shutdown(),
    ]);
  }

  #stopTimers(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    process.removeListener('beforeExit', this.#onBeforeExit);
    this.#contextManager.setBinder(undefined);
    this.#binder.disable();
  }

  #closeWindow(restart: boolean): void {
    const w = this.#collect(restart);
    if (w !== undefined) this.#pipeline.submit(w);
  }

  #collect(restart: boolean): WindowProfile | undefined {
    try {
      const w = this.#sampler.rotate(restart);
      if (w === undefined) return undefined;
      this.#windows++;
      this.#count(w);
      return w;
    } catch (err) {
      this.#diag.error('sampler.collect', err);
      return undefined;
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
    try {
      const w = this.#collect(false);
      if (w !== undefined) {
        mkdirSync(this.#outputDir, { recursive: true });
        const bytes = gzipSync(w.wall.encode());
        writeFileSync(join(this.#outputDir, windowFileName(w.startUnixNs, w.profileId, 'wall')), bytes);
      }
    } catch (err) {
      this.#diag.warnOnce('exit', `spanfuse: could not write the last window at exit: ${describe(err)}`);
    }
    this.#spansFile?.flushSync();
  }
}

function currentThread(): ThreadIdentity {
  let tid = process.pid;
  try {
    tid = (getNativeThreadId as () => number)();
  } catch {
    // Platforms without the native id keep the process id.
  }
  return { tid, name: isMainThread ? 'main' : `worker-${threadId}` };
}
