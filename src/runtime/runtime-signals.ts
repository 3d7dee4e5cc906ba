import type { Profile } from 'pprof-format';
import type { RuntimeConfig } from '../config/runtime.js';
import type { SpanCounterSource } from '../core/counters.js';
import type { Diagnostics } from '../core/diagnostics.js';
import type { AttributeValue } from '../core/window.js';
import { runSync } from '../core/slices.js';
import type { Steps } from '../core/slices.js';
import { LoopGcMonitor } from './loop-gc.js';
import { buildOffCpuProfile } from './offcpu-profile.js';
import { HARDWARE_EVENTS, PerfGroup } from './perf-events.js';
import { detectPlatform } from './platform.js';
import type { Platform } from './platform.js';
import type { StateSnapshot } from './state-reader.js';
import { wchanName } from './state-table.js';
import { SpanWindowCountersUnavailable, ThreadWindowCounters } from './span-counters.js';
import { StartupSpanCounters } from './startup-counters.js';
import { ThreadStateSampler } from './thread-state-sampler.js';
import type { ThreadStateStats } from './thread-state-sampler.js';
import { ThreadCounterReader } from './thread-stats.js';
import { currentTid } from './thread-id.js';
import { ThreadInventory } from './threads.js';
import { ProcessContextPublisher } from './process-context.js';
import type { PublishResult } from './process-context.js';
import type { ContextValue } from './proto.js';
import { ThreadContextPublisher } from './thread-context.js';
import type { ThreadpoolNaming } from './threads.js';

export interface RuntimeWindow {
  offCpu?: Profile;
  readonly attributes: Record<string, AttributeValue>;
}

export interface RuntimeStats {
  readonly platform: Platform;
  readonly threadState: ThreadStateStats | undefined;
  readonly threadpool: ThreadpoolNaming | undefined;
  readonly counterSource: 'getrusage' | 'proc' | 'none';
  /** Hardware perf counters open on the main thread (none without a PMU or with perf events off). */
  readonly perfHardware: readonly string[];
  /** Counter name -> why it is not offered. */
  readonly unsupported: Readonly<Record<string, string>>;
  /** OTEP-4719 process context: 'memfd' / 'anonymous' mapping, 'disabled', or why not. */
  readonly processContext: string;
  /** OTEP-4947 thread context: 'active' or why not. */
  readonly threadContext: string;
}

export interface RuntimeStartOptions {
  /** Resource attributes to publish in the OTEP-4719 process context. */
  readonly resource?: Readonly<Record<string, ContextValue>>;
}

/** The reader's switches and faults where they cost one syscall (getrusage), else undefined (/proc is read). */
function counterReader(r: ThreadCounterReader): ((out: Float64Array) => boolean) | undefined {
  return r.source === 'getrusage' ? (out) => r.readSwitchesAndFaults(out) : undefined;
}

/**
 * The runtime stage, started once on the main thread: thread identity, the
 * thread-state sampler, event-loop and GC figures, perf counters, and the
 * span counter source.
 */
export class RuntimeSignals {
  readonly #c: RuntimeConfig;
  readonly #diag: Diagnostics;
  readonly platform: Platform;
  readonly inventory = new ThreadInventory();
  readonly #loop = new LoopGcMonitor();
  #sampler: ThreadStateSampler | undefined;
  #prev: StateSnapshot = new Map();
  #counters: ThreadCounterReader | undefined;
  #hardware: PerfGroup | undefined;
  readonly #unsupported: Record<string, string> = {};
  #spanSource: SpanCounterSource | undefined;
  /** The main thread's counters at the previous window close, by `runtime.main.` name. */
  readonly #mainPrev = new Map<string, number>();
  #stopped = false;
  #started = false;
  readonly #processContext = new ProcessContextPublisher();
  #processContextResult: PublishResult | undefined;
  #threadContext: ThreadContextPublisher | undefined;

  constructor(config: RuntimeConfig, diagnostics: Diagnostics, options: { platform?: Platform } = {}) {
    this.#c = config;
    this.#diag = diagnostics;
    this.platform = options.platform ?? detectPlatform();
  }

  /**
   * The sampler's shared table, to hand to worker threads (workerData) so
   * they can build their own span counters with {@link createThreadSpanCounters}.
   */
  sharedState(): SharedArrayBuffer | undefined {
    return this.#sampler?.reader?.views.sab;
  }

  /**
   * Never throws; what cannot run is recorded in `stats()` and warned once.
   * Everything that span counters read is set up synchronously, before the
   * first await: `spanCounters()` and `sharedState()` are complete as soon
   * as this returns its promise. What is asynchronous (probing an existing
   * threadpool, the sampler thread's first pass) finishes later; until that
   * pass, span counters read the thread's counters directly.
   */
  async start(options: RuntimeStartOptions = {}): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    this.#loop.start();
    this.#startContexts(options);
    const p = this.platform;
    if (p.unsupportedReason !== undefined) {
      this.#diag.warnOnce('runtime.platform', `spanfuse: ${p.unsupportedReason}; thread signals are off`);
      for (const name of [...HARDWARE_EVENTS.map((e) => e.name), 'profiler.futex.wait_ns', 'profiler.runqueue.delay_ns']) {
        this.#unsupported[name] = p.unsupportedReason;
      }
      return;
    }
    let naming: Promise<unknown> = Promise.resolve();
    try {
      // Its synchronous part (captureStartup) runs now, before the app's I/O.
      if (this.#c.nameThreads) naming = this.inventory.nameThreadpool(this.#c.threadpoolSize);
      else this.inventory.captureStartup({ rename: false });
    } catch (err) {
      this.#diag.error('runtime.thread_names', err);
    }
    this.#counters = new ThreadCounterReader();
    if (this.#counters.source === 'proc') {
      this.#diag.warnOnce('runtime.koffi', 'spanfuse: koffi not available; per-thread counters come from /proc (slower)');
    }
    // Baseline for the first window's deltas.
    this.#mainWindow({});
    if (this.#c.perfEvents) {
      const hw = PerfGroup.open(HARDWARE_EVENTS);
      this.#hardware = hw.group;
      Object.assign(this.#unsupported, hw.unsupported);
      this.#perfWindow(this.#hardware, {});
    } else {
      for (const e of HARDWARE_EVENTS) this.#unsupported[e.name] = 'perf events disabled by configuration';
    }
    let ready: Promise<boolean> | undefined;
    if (this.#c.threadState) {
      const sampler = new ThreadStateSampler({
        hz: this.#c.threadStateHz,
        arch: p.arch,
        diagnostics: this.#diag,
        threads: this.#c.threadStateThreads,
        host: this.#c.threadStateHost,
        hostCounters: counterReader(this.#counters),
        idleEvery: this.#c.threadStateIdleEvery,
      });
      // The shared table exists once start() returned: span counters can read
      // it from the first span on; they show sampler figures once passes run.
      ready = sampler.start();
      this.#sampler = sampler;
    } else {
      this.#unsupported['profiler.futex.wait_ns'] = 'thread-state sampler disabled by configuration';
    }
    await naming.catch((err: unknown) => this.#diag.error('runtime.thread_names', err));
    if (ready !== undefined) {
      if (await ready) {
        this.#prev = this.#sampler?.reader?.snapshot() ?? new Map();
      } else {
        this.#sampler = undefined;
        this.#unsupported['profiler.futex.wait_ns'] = 'thread-state sampler failed to start';
      }
    }
  }

  #startContexts(options: RuntimeStartOptions): void {
    try {
      if (this.#c.threadContext) {
        this.#threadContext = new ThreadContextPublisher();
        if (!this.#threadContext.supported) {
          this.#diag.warnOnce('runtime.thread_context', `spanfuse: no OTEP-4947 thread context: ${this.#threadContext.reason ?? ''}`);
        }
      }
      if (this.#c.processContext) {
        const attributes: Record<string, ContextValue> = { ...(this.#threadContext?.processContextAttributes() ?? {}) };
        this.#processContextResult = this.#processContext.publish(options.resource ?? {}, attributes);
        if (!this.#processContextResult.ok) {
          this.#diag.warnOnce('runtime.process_context', `spanfuse: no OTEP-4719 process context: ${this.#processContextResult.reason}`);
        }
      }
    } catch (err) {
      this.#diag.error('runtime.contexts', err);
    }
  }

  /**
   * The OTEP-4947 publisher; call `run(spanContext, fn)` inside the context
   * manager's `with()` and `end(spanContext)` when the span ends. Undefined
   * when disabled; `supported` false (with `reason`) where it cannot run.
   */
  threadContext(): ThreadContextPublisher | undefined {
    return this.#threadContext;
  }

  /** Outcome of the last process-context publication (address included). */
  processContextResult(): PublishResult | undefined {
    return this.#processContextResult;
  }

  /** Republish the process context (e.g. the resource changed). */
  updateProcessContext(resource: Readonly<Record<string, ContextValue>>): PublishResult {
    const attributes: Record<string, ContextValue> = { ...(this.#threadContext?.processContextAttributes() ?? {}) };
    this.#processContextResult = this.#processContext.publish(resource, attributes);
    return this.#processContextResult;
  }

  /** Span counters for the main thread (see ThreadWindowCounters). */
  spanCounters(): SpanCounterSource {
    // /proc reads per span cost ~100 µs (bench/threadstate/span-counters), so
    // exact reads happen only through getrusage; otherwise the sampler's.
    const exact = this.#c.spanCounters === 'syscall' && this.#counters?.source === 'getrusage';
    if (this.#spanSource !== undefined) return this.#spanSource;
    if (!this.#started) return (this.#spanSource = new SpanWindowCountersUnavailable());
    const tid = currentTid();
    const common = {
      tid,
      ...(this.#sampler?.reader ? { state: this.#sampler.reader } : {}),
      loop: this.#loop,
      ...(this.#hardware ? { hardware: this.#hardware } : {}),
    };
    const steady = new ThreadWindowCounters({ ...common, ...(exact && this.#counters ? { threadCounters: this.#counters } : {}) });
    const reader = this.#sampler?.reader;
    // The sampler thread needs tens of ms to start (more under load): spans
    // that begin before its first pass read the thread's counters directly.
    this.#spanSource =
      exact || reader === undefined || this.#counters === undefined
        ? steady
        : new StartupSpanCounters(steady, new ThreadWindowCounters({ ...common, threadCounters: this.#counters }), () => reader.passes() > 0);
    return this.#spanSource;
  }

  collectWindow(startUnixNs: bigint, endUnixNs: bigint): RuntimeWindow {
    return runSync(this.collectWindowSteps(startUnixNs, endUnixNs));
  }

  /**
   * {@link collectWindow} in three steps (counters and the thread-state
   * snapshot; the thread names, read from /proc; the off-CPU profile), each
   * ~1.5-2 ms on the 2-core VM, where the whole took 5 ms in one step.
   */
  *collectWindowSteps(startUnixNs: bigint, endUnixNs: bigint): Steps<RuntimeWindow> {
    const attributes: Record<string, AttributeValue> = {};
    const window: RuntimeWindow = { attributes };
    let current: StateSnapshot | undefined;
    const reader = this.#sampler?.reader;
    try {
      Object.assign(attributes, this.#loop.collectWindow());
      for (const [name, reason] of Object.entries(this.#unsupported)) {
        attributes[`profiler.unsupported.${name.replace(/^profiler\./, '')}`] = reason;
      }
      this.#mainWindow(attributes);
      this.#perfWindow(this.#hardware, attributes);
      current = reader?.snapshot();
    } catch (err) {
      this.#diag.error('runtime.collect_window', err);
    }
    if (reader === undefined || current === undefined) return window;
    yield;
    let names: Map<number, string>;
    try {
      names = new Map(this.inventory.list().map((t) => [t.tid, t.name]));
    } catch (err) {
      this.#diag.error('runtime.collect_window', err);
      return window;
    }
    yield;
    try {
      const offCpu = buildOffCpuProfile({
        previous: this.#prev,
        current,
        arch: this.platform.arch,
        threadName: (tid) => names.get(tid) ?? `thread-${tid}`,
        wchanName: (id) => wchanName(reader.views, id),
        startUnixNs,
        endUnixNs,
        intervalNs: Math.round(1e9 / this.#c.threadStateHz),
      });
      this.#prev = current;
      if (offCpu) window.offCpu = offCpu;
      attributes['runtime.thread_state.hz'] = this.#c.threadStateHz;
      attributes['runtime.thread_state.host'] = this.#c.threadStateHost;
      attributes['runtime.thread_state.idle_every'] = this.#c.threadStateIdleEvery;
    } catch (err) {
      this.#diag.error('runtime.collect_window', err);
    }
    return window;
  }

  /**
   * Cumulative off-CPU, futex-wait and run-queue time of any OS thread the
   * sampler watches (ns, as of its last pass); the difference of two calls is
   * the figure over that time range. Undefined when the thread is not watched.
   */
  threadTotals(tid: number): { offCpuNs: number; futexNs: number; runqueueNs?: number } | undefined {
    const r = this.#sampler?.reader;
    const off = r?.offCpuNs(tid);
    const futex = r?.futexNs(tid);
    if (r === undefined || off === undefined || futex === undefined) return undefined;
    const rq = r.runqueueNs(tid);
    return { offCpuNs: off, futexNs: futex, ...(rq !== undefined ? { runqueueNs: rq } : {}) };
  }

  /**
   * The main thread's CPU time, context switches and page faults over the
   * window, from its own counters (getrusage or /proc, read once per
   * window): `runtime.main.task_clock_ns`, `runtime.main.context_switches`,
   * `runtime.main.page_faults`. (The names are perf's: these came from perf
   * software events until 2026-12-06. A perf event open on a thread makes
   * every switch of that thread dearer; see `RuntimeConfig.perfEvents`.)
   */
  #mainWindow(attributes: Record<string, AttributeValue>): void {
    // After stop() the reader is closed (a read would open its files again).
    const c = this.#stopped ? undefined : this.#counters?.read();
    if (c === undefined) return;
    this.#mainDelta(attributes, 'task_clock_ns', c.onCpuNs ?? c.cpuUserNs + c.cpuSystemNs);
    this.#mainDelta(attributes, 'context_switches', c.ctxSwitchesVoluntary + c.ctxSwitchesInvoluntary);
    this.#mainDelta(attributes, 'page_faults', c.minorFaults + c.majorFaults);
  }

  /** Main-thread hardware counter deltas over the window: `runtime.main.<counter>`. */
  #perfWindow(group: PerfGroup | undefined, attributes: Record<string, AttributeValue>): void {
    if (!group) return;
    const values = new Float64Array(group.names.length);
    if (!group.read(values)) return;
    group.names.forEach((name, i) => this.#mainDelta(attributes, name.replace(/^profiler\./, ''), values[i] ?? 0));
  }

  /** `runtime.main.<name>`: the growth of cumulative `value` since the last window (none the first time). */
  #mainDelta(attributes: Record<string, AttributeValue>, name: string, value: number): void {
    const prev = this.#mainPrev.get(name);
    this.#mainPrev.set(name, value);
    const d = prev === undefined ? Number.NaN : value - prev;
    if (Number.isFinite(d)) attributes[`runtime.main.${name}`] = Math.max(0, d);
  }

  stats(): RuntimeStats {
    return {
      platform: this.platform,
      threadState: this.#sampler?.stats(),
      threadpool: this.inventory.threadpool,
      counterSource: this.#counters?.source ?? 'none',
      perfHardware: this.#hardware?.names ?? [],
      unsupported: { ...this.#unsupported },
      processContext:
        this.#processContextResult === undefined
          ? 'disabled'
          : this.#processContextResult.ok
            ? this.#processContextResult.kind
            : this.#processContextResult.reason,
      threadContext:
        this.#threadContext === undefined ? 'disabled' : this.#threadContext.supported ? 'active' : (this.#threadContext.reason ?? 'unsupported'),
    };
  }

  /** Idempotent. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#loop.stop();
    await this.#sampler?.stop();
    this.#hardware?.close();
    this.#counters?.close();
    this.#hardware = undefined;
  }
}
