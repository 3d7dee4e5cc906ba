import { resolve } from 'node:path';
import { ConfigError } from '../core/errors.js';
import type { ConfigProblem } from '../core/errors.js';
import { Problems, envBool, envInt, envKeyValues, envString, readEnv } from './env.js';
import type { EnvSource } from './env.js';
import { resolveExportConfig } from './export.js';
import type { ExportOptions, ResolvedExportConfig } from './export.js';
import { resolveHeapConfig } from './heap.js';
import { resolveDebugConfig } from './debug.js';
import type { DebugConfig, DebugOptions } from './debug.js';
import type { HeapConfig, HeapOptions } from './heap.js';
import { parseRuntimeConfig } from './runtime.js';
import type { RuntimeConfig, RuntimeOptions } from './runtime.js';
import { resolveTailConfig } from './tail.js';
import type { TailOptions } from './tail.js';
import type { TailSettings } from '../exemplars/index.js';

export { readEnv, Problems } from './env.js';
export type { EnvSource } from './env.js';
export type { ExportOptions, ResolvedExportConfig } from './export.js';
export type { HeapOptions, HeapConfig } from './heap.js';
export type { DebugOptions, DebugConfig } from './debug.js';
export type { RuntimeOptions, RuntimeConfig } from './runtime.js';
export type { TailOptions, TailRuleOptions } from './tail.js';

/** Options accepted by `start()`. Every field is optional; env fills the gaps. */
export interface SpanfuseOptions {
  /** Turn spanfuse off entirely (`SPANFUSE_ENABLED`). Default true. */
  enabled?: boolean;
  /** `service.name` (`OTEL_SERVICE_NAME`). Default `unknown_service:node`. */
  serviceName?: string;
  /** Extra resource attributes (`OTEL_RESOURCE_ATTRIBUTES`). */
  resourceAttributes?: Record<string, string>;
  /** Folder for the embedded output (`SPANFUSE_OUTPUT_DIR`). Default `./spanfuse-out`. */
  outputDir?: string;
  /** Length of a profile window in ms (`SPANFUSE_WINDOW_MS`). Default 10000. */
  windowMs?: number;
  /** Mean time between samples in µs (`SPANFUSE_SAMPLING_INTERVAL_US`). Default 10000. */
  samplingIntervalMicros?: number;
  /** Collect per-sample thread CPU time (`SPANFUSE_CPU_TIME`). Default true. */
  collectCpuTime?: boolean;
  /**
   * Without AsyncContextFrame (Node 20): also clear the sampler's context
   * slot after every async callback (`SPANFUSE_CLEAR_CONTEXT_BETWEEN_CALLBACKS`).
   * Default false: the slot keeps the last callback's span until the next
   * callback sets its own, which halves the async_hooks calls (see
   * `HookBinder`). Ignored with AsyncContextFrame.
   */
  clearContextBetweenCallbacks?: boolean;
  /**
   * Write ended spans to `<outputDir>/spans.jsonl` when spanfuse provides the
   * tracer provider (`SPANFUSE_SPANS_FILE`). Default true.
   */
  spansFile?: boolean;
  /** Max bytes of `spans.jsonl` before it rotates to `spans.1.jsonl` (`SPANFUSE_SPANS_MAX_BYTES`). */
  spansFileMaxBytes?: number;
  /**
   * `spans.jsonl` keeps every tail span and one trace in N of the other
   * spans, chosen by trace id (a kept trace keeps all its spans); each such
   * line carries `"adjustedCount": N` (`SPANFUSE_SPANS_ONE_IN`). 1 writes
   * every span. Default 10.
   */
  spansFileOneIn?: number;
  /**
   * Register a tracer provider when the app has none (`SPANFUSE_TRACER_PROVIDER`,
   * `auto` or `off`). Default `auto`.
   */
  tracerProvider?: 'auto' | 'off';
  /**
   * When spanfuse provides the tracer provider, also enable OpenTelemetry's
   * HTTP server/client instrumentation if `@opentelemetry/instrumentation-http`
   * is installed (`SPANFUSE_AUTO_INSTRUMENT`, `http` or `off`). Default `off`.
   */
  autoInstrument?: 'http' | 'off';
  /**
   * Longest wait, per `worker.terminate()` and at the process's exit, for
   * profiled workers to write their open windows first
   * (`SPANFUSE_WORKER_FLUSH_TIMEOUT_MS`). Default 2000. 0 asks nothing: a
   * terminated worker's open window is lost.
   */
  workerFlushTimeoutMs?: number;
  /** Where profiles go: files, OTLP, Pyroscope; retention, retry, scrubbing. */
  export?: ExportOptions;
  /** Tail-latency detection and span enrichment. */
  tail?: TailOptions;
  /** Heap and allocation profiling. */
  heap?: HeapOptions;
  /** Kernel/runtime signals per OS thread, context for eBPF profilers. */
  runtime?: RuntimeOptions;
  /** Local debug endpoint: pprof, tail spans, flamegraphs (off unless a port is set). */
  debug?: DebugOptions;
}

export interface ResolvedConfig {
  readonly enabled: boolean;
  readonly serviceName: string;
  readonly resourceAttributes: Readonly<Record<string, string>>;
  readonly outputDir: string;
  readonly windowMs: number;
  readonly samplingIntervalMicros: number;
  readonly collectCpuTime: boolean;
  readonly clearContextBetweenCallbacks: boolean;
  readonly spansFile: boolean;
  readonly spansFileMaxBytes: number;
  readonly spansFileOneIn: number;
  readonly tracerProvider: 'auto' | 'off';
  readonly autoInstrument: 'http' | 'off';
  readonly workerFlushTimeoutMs: number;
  readonly export: ResolvedExportConfig;
  readonly tail: TailSettings;
  readonly heap: HeapConfig;
  readonly runtime: RuntimeConfig;
  readonly debug: DebugConfig;
  /** Settings that were ignored (an exporter not selected, lenient OTEL_* parsing); printed once at start. */
  readonly warnings: readonly ConfigProblem[];
}

export const DEFAULTS = {
  windowMs: 10_000,
  samplingIntervalMicros: 10_000,
  outputDir: './spanfuse-out',
  spansFileMaxBytes: 64 * 1024 * 1024,
  spansFileOneIn: 10,
  workerFlushTimeoutMs: 2000,
} as const;

const WINDOW_BOUNDS = { min: 100, max: 3_600_000 };
const INTERVAL_BOUNDS = { min: 100, max: 1_000_000 };
const SPANS_BYTES_BOUNDS = { min: 4096, max: 2 ** 40 };
const SPANS_ONE_IN_BOUNDS = { min: 1, max: 1_000_000 };
const WORKER_FLUSH_BOUNDS = { min: 0, max: 60_000 };

/**
 * One merge (code > env > default) and one validation. Throws a single
 * ConfigError that lists every problem with its field and fix.
 */
export function resolveConfig(options: SpanfuseOptions = {}, env: EnvSource = readEnv()): ResolvedConfig {
  const problems = new Problems();
  if (options === null || typeof options !== 'object') {
    problems.add('options', 'expected an object of options (or nothing)');
    throw new ConfigError(problems.list);
  }

  const enabled = pick(options.enabled, envBool(env, 'SPANFUSE_ENABLED', problems), true);
  const serviceName = pick(options.serviceName, envString(env, 'OTEL_SERVICE_NAME'), undefined);
  // OTel's environment spec: a value that cannot be decoded is discarded
  // whole and reported, and the SDK goes on; so does spanfuse (a warning).
  const resourceWarnings = problems.warnings.length;
  const parsedResource = envKeyValues(env, 'OTEL_RESOURCE_ATTRIBUTES', problems.lenient('the whole variable is ignored (OpenTelemetry discards it too)'));
  const envResource = problems.warnings.length === resourceWarnings ? (parsedResource ?? {}) : {};
  const resourceAttributes = { ...envResource, ...(options.resourceAttributes ?? {}) };
  const outputDir = pick(options.outputDir, envString(env, 'SPANFUSE_OUTPUT_DIR'), DEFAULTS.outputDir);
  const windowMs = pick(options.windowMs, envInt(env, 'SPANFUSE_WINDOW_MS', problems, WINDOW_BOUNDS), DEFAULTS.windowMs);
  const samplingIntervalMicros = pick(
    options.samplingIntervalMicros,
    envInt(env, 'SPANFUSE_SAMPLING_INTERVAL_US', problems, INTERVAL_BOUNDS),
    DEFAULTS.samplingIntervalMicros,
  );
  const collectCpuTime = pick(options.collectCpuTime, envBool(env, 'SPANFUSE_CPU_TIME', problems), true);
  const clearContextBetweenCallbacks = pick(
    options.clearContextBetweenCallbacks,
    envBool(env, 'SPANFUSE_CLEAR_CONTEXT_BETWEEN_CALLBACKS', problems),
    false,
  );
  const spansFile = pick(options.spansFile, envBool(env, 'SPANFUSE_SPANS_FILE', problems), true);
  const spansFileMaxBytes = pick(
    options.spansFileMaxBytes,
    envInt(env, 'SPANFUSE_SPANS_MAX_BYTES', problems, SPANS_BYTES_BOUNDS),
    DEFAULTS.spansFileMaxBytes,
  );
  const spansFileOneIn = pick(
    options.spansFileOneIn,
    envInt(env, 'SPANFUSE_SPANS_ONE_IN', problems, SPANS_ONE_IN_BOUNDS),
    DEFAULTS.spansFileOneIn,
  );
  const workerFlushTimeoutMs = pick(
    options.workerFlushTimeoutMs,
    envInt(env, 'SPANFUSE_WORKER_FLUSH_TIMEOUT_MS', problems, WORKER_FLUSH_BOUNDS),
    DEFAULTS.workerFlushTimeoutMs,
  );
  const envProvider = envString(env, 'SPANFUSE_TRACER_PROVIDER');
  if (envProvider !== undefined && envProvider !== 'auto' && envProvider !== 'off') {
    problems.add('SPANFUSE_TRACER_PROVIDER', `expected "auto" or "off", got ${JSON.stringify(envProvider)}`);
  }
  const tracerProvider = pick(
    options.tracerProvider,
    envProvider === 'auto' || envProvider === 'off' ? envProvider : undefined,
    'auto',
  );
  const envAuto = envString(env, 'SPANFUSE_AUTO_INSTRUMENT');
  if (envAuto !== undefined && envAuto !== 'http' && envAuto !== 'off') {
    problems.add('SPANFUSE_AUTO_INSTRUMENT', `expected "http" or "off", got ${JSON.stringify(envAuto)}`);
  }
  const autoInstrument = pick(options.autoInstrument, envAuto === 'http' || envAuto === 'off' ? envAuto : undefined, 'off');
  if (autoInstrument !== 'http' && autoInstrument !== 'off') {
    problems.add('autoInstrument', `expected "http" or "off", got ${JSON.stringify(autoInstrument)}`);
  }

  // Validate the merged values (code-supplied ones have not been checked yet).
  checkBool(problems, 'enabled', enabled);
  checkBool(problems, 'collectCpuTime', collectCpuTime);
  checkBool(problems, 'clearContextBetweenCallbacks', clearContextBetweenCallbacks);
  checkBool(problems, 'spansFile', spansFile);
  checkInt(problems, 'windowMs', windowMs, WINDOW_BOUNDS);
  checkInt(problems, 'samplingIntervalMicros', samplingIntervalMicros, INTERVAL_BOUNDS);
  checkInt(problems, 'spansFileMaxBytes', spansFileMaxBytes, SPANS_BYTES_BOUNDS);
  checkInt(problems, 'spansFileOneIn', spansFileOneIn, SPANS_ONE_IN_BOUNDS);
  checkInt(problems, 'workerFlushTimeoutMs', workerFlushTimeoutMs, WORKER_FLUSH_BOUNDS);
  if (typeof outputDir !== 'string' || outputDir.trim() === '') {
    problems.add('outputDir', 'expected a non-empty folder path');
  } else if (/^\/proc(\/|$)/.test(resolve(outputDir))) {
    // Node's recursive mkdir never returns for a missing folder under /proc
    // (procfs answers ENOENT while the parent exists): the preload would
    // hang the app's start-up instead of failing.
    problems.add('outputDir', `${JSON.stringify(outputDir)} is under /proc, where no folder can be made; pick a writable folder`);
  }
  if (serviceName !== undefined && (typeof serviceName !== 'string' || serviceName.trim() === '')) {
    problems.add('serviceName', 'expected a non-empty string');
  }
  if (tracerProvider !== 'auto' && tracerProvider !== 'off') {
    problems.add('tracerProvider', `expected "auto" or "off", got ${JSON.stringify(tracerProvider)}`);
  }
  const timingValid = problems.list.every((p) => !/window|interval/i.test(p.field));
  if (timingValid) {
    if (samplingIntervalMicros / 1000 > windowMs / 10) {
      problems.add('samplingIntervalMicros', `a window of ${windowMs} ms needs at least 10 samples; lower the interval or lengthen windowMs`);
    }
  }
  for (const [k, v] of Object.entries(resourceAttributes)) {
    if (typeof v !== 'string') problems.add(`resourceAttributes.${k}`, 'expected a string value');
  }

  const exportConfig = resolveExportConfig(options.export, env, problems);
  const tail = resolveTailConfig(options.tail, env, problems);
  const heap = resolveHeapConfig(options.heap, env, problems);
  const runtime = parseRuntimeConfig(env, problems, options.runtime);
  const debug = resolveDebugConfig(options.debug, env, problems);

  if (problems.list.length > 0) throw new ConfigError(problems.list);

  return {
    enabled,
    serviceName: serviceName ?? resourceAttributes['service.name'] ?? 'unknown_service:node',
    resourceAttributes,
    outputDir,
    windowMs,
    samplingIntervalMicros,
    collectCpuTime,
    clearContextBetweenCallbacks,
    spansFile,
    spansFileMaxBytes,
    spansFileOneIn,
    tracerProvider,
    autoInstrument,
    workerFlushTimeoutMs,
    export: exportConfig,
    tail,
    heap,
    runtime,
    debug,
    warnings: problems.warnings,
  };
}

/** The one warning printed for ignored settings. */
export function formatConfigWarnings(warnings: readonly ConfigProblem[]): string {
  return `spanfuse: ignored configuration (profiling continues):\n${warnings.map((w) => `  - ${w.field}: ${w.message}`).join('\n')}`;
}

function pick<T>(code: T | undefined, env: T | undefined, fallback: T): T {
  if (code !== undefined) return code;
  if (env !== undefined) return env;
  return fallback;
}

function checkBool(problems: Problems, field: string, value: unknown): void {
  if (typeof value !== 'boolean') problems.add(field, `expected true or false, got ${JSON.stringify(value)}`);
}

function checkInt(problems: Problems, field: string, value: unknown, b: { min: number; max: number }): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < b.min || value > b.max) {
    problems.add(field, `expected a whole number from ${b.min} to ${b.max}, got ${JSON.stringify(value)}`);
  }
}
