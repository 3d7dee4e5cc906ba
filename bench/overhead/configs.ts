/**
 * The configurations the overhead benchmark compares. Data, not code: to add
 * a configuration (say, a new spanfuse option), add an entry here; the
 * harness, the server and the report read nothing else.
 *
 * String values may hold placeholders that the harness fills in per server
 * process: `{outputDir}` (a fresh temp folder), `{otlpUrl}` (loopback OTLP
 * receiver base URL), `{sinkUrl}` (loopback peer ingest/agent sink), and
 * `{windowMs}` / `{windowS}` (the export period, equal for every profiler so
 * each one exports inside the measured window). A string that is exactly
 * `{windowMs}` becomes a number.
 */

/**
 * Which profiler the server starts, before it loads `node:http`. `pprof` is
 * @datadog/pprof's wall sampler alone (the one spanfuse builds on): no
 * contexts, no labels, windows rotated and gzip-encoded at the export period
 * and then dropped; its rate comes from `BENCH_PPROF_INTERVAL_US`.
 */
export type ProfilerKind = 'none' | 'spanfuse' | 'pyroscope' | 'dd-trace' | 'pprof';

/**
 * Who makes the per-request server span.
 * - `otel-basic`: the app registers a plain BasicTracerProvider with an
 *   AsyncLocalStorageContextManager (the control and pyroscope, so tracing
 *   costs the same in both).
 * - `spanfuse`: the app registers nothing; spanfuse installs its provider.
 * - `dd-trace`: dd-trace is its own tracer; its http plugin makes the span.
 * - `none`: no tracing at all (the untraced service, for the sampler floor).
 */
export type TracingKind = 'otel-basic' | 'spanfuse' | 'dd-trace' | 'none';

/** How the request's span id is put on samples by the app itself. */
export type AppLabels = 'none' | 'pyroscope-wrap' | 'pprof-context';

export interface BenchConfig {
  readonly name: string;
  readonly description: string;
  readonly profiler: ProfilerKind;
  readonly tracing: TracingKind;
  readonly labels: AppLabels;
  /** spanfuse only: `start()` in the app, or the `--import spanfuse/register` preload. */
  readonly spanfuseEntry?: 'start' | 'register';
  /** spanfuse only: options passed to `start()` (placeholders allowed). */
  readonly spanfuseOptions?: Readonly<Record<string, unknown>>;
  /** Extra environment for the server process (placeholders allowed). */
  readonly env?: Readonly<Record<string, string>>;
  /** Extra node flags for the server process. */
  readonly execArgv?: readonly string[];
  /** Register the app's tracing before starting the profiler (default: profiler first). */
  readonly appTracingFirst?: boolean;
  /** Part of the default set; others run only when named with --configs. */
  readonly byDefault: boolean;
  /** Ratios to this configuration of the same round instead of `control` (which must run too). */
  readonly reference?: string;
  /** spanfuse only: load this build instead of --spanfuse (set by --baseline for the `@base` twins). */
  readonly spanfuseModule?: string;
}

const spanfuseBase = {
  outputDir: '{outputDir}',
  windowMs: '{windowMs}',
  serviceName: 'spanfuse-bench',
} as const;

/** The runtime stage off entirely. */
const RUNTIME_OFF = { threadState: false, perfEvents: false, processContext: false, threadContext: false, nameThreads: false } as const;

/** Only the span-labelled sampler: runtime stage, tail detection and spans.jsonl off. */
const SAMPLER_ONLY = { spansFile: false, tail: { enabled: false }, runtime: RUNTIME_OFF } as const;

/** What `spanfuse-all` turns on beyond the defaults, one part at a time (the `spanfuse-plus-*` configurations). */
const ALL = {
  heapAllocations: { heap: { enabled: true, allocations: true } },
  allThreads: { runtime: { threadState: true, threadStateThreads: 'all' } },
  syscallCounters: { runtime: { spanCounters: 'syscall' } },
  threadContext: { runtime: { threadContext: true } },
  otlp: { export: { exporters: ['file', 'otlp'], file: { formats: ['pprof', 'otlp'] }, otlp: { endpoint: '{otlpUrl}' } } },
} as const;

/** spanfuse through start() with `options` over the bench's base options, not run by default. */
function spanfuseWith(name: string, description: string, options: Readonly<Record<string, unknown>>): BenchConfig {
  return {
    name,
    description,
    profiler: 'spanfuse',
    tracing: 'spanfuse',
    labels: 'none',
    spanfuseEntry: 'start',
    spanfuseOptions: { ...spanfuseBase, ...options },
    byDefault: false,
  };
}

/** spanfuse defaults plus one part of `spanfuse-all`. */
function plus(part: keyof typeof ALL, description: string): BenchConfig {
  return spanfuseWith(
    `spanfuse-plus-${part.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`,
    `spanfuse defaults plus ${description} (one part of spanfuse-all)`,
    ALL[part],
  );
}

export const CONFIGS: readonly BenchConfig[] = [
  {
    name: 'control',
    description: 'no profiler; OTel BasicTracerProvider + AsyncLocalStorageContextManager',
    profiler: 'none',
    tracing: 'otel-basic',
    labels: 'none',
    byDefault: true,
  },
  {
    name: 'spanfuse-default',
    description: 'spanfuse start() at defaults (only outputDir and the export window set)',
    profiler: 'spanfuse',
    tracing: 'spanfuse',
    labels: 'none',
    spanfuseEntry: 'start',
    spanfuseOptions: spanfuseBase,
    byDefault: true,
  },
  {
    // Option names below follow the spine as announced; the lead extends this
    // entry as capabilities land (heap sampler, kernel tiers, tail enrichment,
    // OTLP export). A start() that rejects an option shows up as a failed
    // configuration in the report, never as a silent fallback.
    name: 'spanfuse-all',
    description:
      'spanfuse with everything on: heap sampler with allocations, thread states of all threads, syscall span counters, perf counters, tail enrichment, pprof+OTLP files and OTLP export to a loopback receiver',
    profiler: 'spanfuse',
    tracing: 'spanfuse',
    labels: 'none',
    spanfuseEntry: 'start',
    spanfuseOptions: {
      ...spanfuseBase,
      ...ALL.heapAllocations,
      tail: { enabled: true },
      runtime: {
        ...ALL.allThreads.runtime,
        ...ALL.syscallCounters.runtime,
        perfEvents: true,
        processContext: true,
        ...ALL.threadContext.runtime,
      },
      ...ALL.otlp,
    },
    byDefault: true,
  },
  // The issue's "everything on": the heap sampler (its default, in-use
  // mode), the OTEP-4947 thread context and OTLP export; `spanfuse-all` adds
  // every other option on top (allocation sampling, which makes V8 collect
  // all garbage at every window's heap profile, all threads' states,
  // per-span syscall counters, perf counters).
  spanfuseWith(
    'spanfuse-heap-ctx-otlp',
    'spanfuse defaults plus the heap sampler (in-use), the OTEP-4947 thread context, pprof+OTLP files and OTLP export to a loopback receiver',
    { heap: { enabled: true }, runtime: { ...ALL.threadContext.runtime }, ...ALL.otlp },
  ),
  spanfuseWith('spanfuse-plus-heap', 'spanfuse defaults plus the heap sampler in its default, in-use mode (one part of spanfuse-heap-ctx-otlp)', { heap: { enabled: true } }),
  plus('heapAllocations', 'the heap sampler with allocations'),
  plus('allThreads', 'thread states of all threads'),
  plus('syscallCounters', 'syscall span counters (getrusage at span start and end)'),
  plus('threadContext', 'the OTEP-4947 thread context'),
  plus('otlp', 'pprof and OTLP files and OTLP export to a loopback receiver'),
  {
    name: 'spanfuse-register',
    description: 'spanfuse through the preload (node --import spanfuse/register), env-configured',
    profiler: 'spanfuse',
    tracing: 'spanfuse',
    labels: 'none',
    spanfuseEntry: 'register',
    env: {
      SPANFUSE_OUTPUT_DIR: '{outputDir}',
      SPANFUSE_WINDOW_MS: '{windowMs}',
      OTEL_SERVICE_NAME: 'spanfuse-bench',
    },
    byDefault: false,
  },
  // Decomposition of spanfuse's cost (not in the default set): each turns one
  // default feature off, so the ratio against spanfuse-default shows what that
  // feature costs.
  {
    name: 'spanfuse-no-spans-file',
    description: 'spanfuse defaults without writing spans.jsonl',
    profiler: 'spanfuse',
    tracing: 'spanfuse',
    labels: 'none',
    spanfuseEntry: 'start',
    spanfuseOptions: { ...spanfuseBase, spansFile: false },
    byDefault: false,
  },
  {
    name: 'spanfuse-no-cpu-time',
    description: 'spanfuse defaults without per-sample thread CPU time',
    profiler: 'spanfuse',
    tracing: 'spanfuse',
    labels: 'none',
    spanfuseEntry: 'start',
    spanfuseOptions: { ...spanfuseBase, collectCpuTime: false },
    byDefault: false,
  },
  {
    name: 'spanfuse-no-heap',
    description: 'spanfuse defaults with the heap sampler off',
    profiler: 'spanfuse',
    tracing: 'spanfuse',
    labels: 'none',
    spanfuseEntry: 'start',
    spanfuseOptions: { ...spanfuseBase, heap: { enabled: false } },
    byDefault: false,
  },
  {
    name: 'spanfuse-no-runtime',
    description: 'spanfuse defaults without the runtime stage (thread-state sampler, perf counters, process/thread context)',
    profiler: 'spanfuse',
    tracing: 'spanfuse',
    labels: 'none',
    spanfuseEntry: 'start',
    spanfuseOptions: {
      ...spanfuseBase,
      runtime: RUNTIME_OFF,
    },
    byDefault: false,
  },
  {
    name: 'spanfuse-no-tail',
    description: 'spanfuse defaults without tail detection/exemplars',
    profiler: 'spanfuse',
    tracing: 'spanfuse',
    labels: 'none',
    spanfuseEntry: 'start',
    spanfuseOptions: { ...spanfuseBase, tail: { enabled: false } },
    byDefault: false,
  },
  {
    name: 'spanfuse-perf-events',
    description:
      'spanfuse defaults plus hardware perf counters on the main thread (SPANFUSE_PERF_EVENTS=true; none open without a PMU). Up to 2026-12-06 the default, which also opened three software events',
    profiler: 'spanfuse',
    tracing: 'spanfuse',
    labels: 'none',
    spanfuseEntry: 'start',
    spanfuseOptions: { ...spanfuseBase, runtime: { perfEvents: true } },
    byDefault: false,
  },
  {
    name: 'spanfuse-hooks-clear',
    description: 'spanfuse defaults, and without AsyncContextFrame (Node 20) the span slot cleared after every callback (the default up to 6e7e4cb)',
    profiler: 'spanfuse',
    tracing: 'spanfuse',
    labels: 'none',
    spanfuseEntry: 'start',
    spanfuseOptions: { ...spanfuseBase, clearContextBetweenCallbacks: true },
    byDefault: false,
  },
  {
    name: 'spanfuse-50hz',
    description: 'spanfuse defaults at 50 Hz (samplingIntervalMicros 20000) instead of 100 Hz',
    profiler: 'spanfuse',
    tracing: 'spanfuse',
    labels: 'none',
    spanfuseEntry: 'start',
    spanfuseOptions: { ...spanfuseBase, samplingIntervalMicros: 20000 },
    byDefault: false,
  },
  {
    name: 'spanfuse-sampler-only',
    description: 'spanfuse with only the span-labelled sampler: runtime stage, tail detection and spans.jsonl off',
    profiler: 'spanfuse',
    tracing: 'spanfuse',
    labels: 'none',
    spanfuseEntry: 'start',
    spanfuseOptions: { ...spanfuseBase, ...SAMPLER_ONLY },
    byDefault: false,
  },
  {
    name: 'spanfuse-sampler-only-50hz',
    description: 'spanfuse-sampler-only at 50 Hz (samplingIntervalMicros 20000): what the rate alone buys',
    profiler: 'spanfuse',
    tracing: 'spanfuse',
    labels: 'none',
    spanfuseEntry: 'start',
    spanfuseOptions: { ...spanfuseBase, ...SAMPLER_ONLY, samplingIntervalMicros: 20000 },
    byDefault: false,
  },
  {
    // What the window closes cost: a 10-minute window never closes during a
    // round (the chunks inside the window are still taken and packed; spans
    // and tail holds wait longer, up to their caps).
    name: 'spanfuse-no-close',
    description: 'spanfuse defaults with a 10-minute window: no window closes (build, scrub, encode, write) during a round',
    profiler: 'spanfuse',
    tracing: 'spanfuse',
    labels: 'none',
    spanfuseEntry: 'start',
    spanfuseOptions: { ...spanfuseBase, windowMs: 600_000 },
    byDefault: false,
  },
  {
    name: 'spanfuse-state-main',
    description: "spanfuse defaults with the thread-state sampler on the main thread (runtime.threadStateHost 'main': no worker isolate)",
    profiler: 'spanfuse',
    tracing: 'spanfuse',
    labels: 'none',
    spanfuseEntry: 'start',
    spanfuseOptions: { ...spanfuseBase, runtime: { threadStateHost: 'main' } },
    byDefault: false,
  },
  {
    name: 'spanfuse-state-worker',
    description: "spanfuse defaults with the thread-state sampler in its worker (runtime.threadStateHost 'worker')",
    profiler: 'spanfuse',
    tracing: 'spanfuse',
    labels: 'none',
    spanfuseEntry: 'start',
    spanfuseOptions: { ...spanfuseBase, runtime: { threadStateHost: 'worker' } },
    byDefault: false,
  },
  {
    name: 'spanfuse-app-provider',
    description: 'spanfuse defaults, the app registers its own BasicTracerProvider + ALS context manager first',
    profiler: 'spanfuse',
    tracing: 'otel-basic',
    appTracingFirst: true,
    labels: 'none',
    spanfuseEntry: 'start',
    spanfuseOptions: spanfuseBase,
    byDefault: false,
  },
  {
    name: 'untraced',
    description: 'no profiler, no tracing: the service alone (the reference of the pprof-* floor configurations)',
    profiler: 'none',
    tracing: 'none',
    labels: 'none',
    byDefault: false,
  },
  {
    name: 'pprof-100hz',
    description: '@datadog/pprof wall sampler alone at 100 Hz on the untraced service (no contexts, no labels, windows encoded and dropped); ratios to untraced',
    profiler: 'pprof',
    tracing: 'none',
    labels: 'none',
    env: { BENCH_PPROF_INTERVAL_US: '10000' },
    reference: 'untraced',
    byDefault: false,
  },
  {
    name: 'pprof-50hz',
    description: '@datadog/pprof wall sampler alone at 50 Hz on the untraced service (no contexts, no labels, windows encoded and dropped); ratios to untraced',
    profiler: 'pprof',
    tracing: 'none',
    labels: 'none',
    env: { BENCH_PPROF_INTERVAL_US: '20000' },
    reference: 'untraced',
    byDefault: false,
  },
  {
    name: 'pprof-20hz',
    description: '@datadog/pprof wall sampler alone at 20 Hz on the untraced service (no contexts, no labels, windows encoded and dropped); ratios to untraced',
    profiler: 'pprof',
    tracing: 'none',
    labels: 'none',
    env: { BENCH_PPROF_INTERVAL_US: '50000' },
    reference: 'untraced',
    byDefault: false,
  },
  {
    // What @datadog/pprof's context machinery costs without spanfuse: the
    // traced control plus the sampler with contexts on (AsyncContextFrame on
    // Node 22.7+/24, else its one global slot) and one context per request,
    // entered around the request's work. Ratios to the control, like
    // spanfuse-sampler-only, which adds spanfuse's context manager, span
    // table and window builds to this.
    name: 'pprof-contexts',
    description: '@datadog/pprof wall sampler at 100 Hz with contexts and CPU time (CPED where the runtime has AsyncContextFrame) and one context per request, on the OTel-traced control; windows encoded and dropped',
    profiler: 'pprof',
    tracing: 'otel-basic',
    labels: 'pprof-context',
    env: { BENCH_PPROF_INTERVAL_US: '10000', BENCH_PPROF_CONTEXTS: '1' },
    byDefault: false,
  },
  {
    // What an async_hooks `before` hook costs by itself (hooks mode, the
    // only context mode on Node 20): the traced control plus an empty hook,
    // and plus a hook that reads the OTel active span in every callback, as
    // spanfuse's hooks binder does. No profiler.
    name: 'control-before-hook',
    description: 'the OTel-traced control plus an empty async_hooks before hook',
    profiler: 'none',
    tracing: 'otel-basic',
    labels: 'none',
    env: { BENCH_BEFORE_HOOK: 'empty' },
    byDefault: false,
  },
  {
    name: 'control-before-hook-span',
    description: 'the OTel-traced control plus an async_hooks before hook that reads the active span in every callback',
    profiler: 'none',
    tracing: 'otel-basic',
    labels: 'none',
    env: { BENCH_BEFORE_HOOK: 'span' },
    byDefault: false,
  },
  {
    name: 'pprof-contexts-unlabelled',
    description: 'pprof-contexts without the per-request context: the sampler in context mode with no context ever entered',
    profiler: 'pprof',
    tracing: 'otel-basic',
    labels: 'pprof-context',
    env: { BENCH_PPROF_INTERVAL_US: '10000', BENCH_PPROF_CONTEXTS: '1', BENCH_PPROF_LABEL: '0' },
    byDefault: false,
  },
  {
    name: 'pprof-contexts-no-cpu-time',
    description: 'pprof-contexts without per-sample thread CPU time',
    profiler: 'pprof',
    tracing: 'otel-basic',
    labels: 'pprof-context',
    env: { BENCH_PPROF_INTERVAL_US: '10000', BENCH_PPROF_CONTEXTS: '1', BENCH_PPROF_CPU_TIME: '0' },
    byDefault: false,
  },
  {
    name: 'pyroscope',
    description: '@pyroscope/nodejs defaults + wrapWithLabels({span_id}) around each request; OTel BasicTracerProvider',
    profiler: 'pyroscope',
    tracing: 'otel-basic',
    labels: 'pyroscope-wrap',
    byDefault: true,
  },
  {
    name: 'dd-trace',
    description: 'dd-trace tracer + profiler (wall + space, code hotspots) to a loopback agent sink',
    profiler: 'dd-trace',
    tracing: 'dd-trace',
    labels: 'none',
    env: {
      DD_PROFILING_ENABLED: 'true',
      DD_TRACE_AGENT_URL: '{sinkUrl}',
      DD_PROFILING_UPLOAD_PERIOD: '{windowS}',
      // The default ("on") picks zstd where available; gzip lets the harness
      // decode the profile on Node 20 for the attribution check.
      DD_PROFILING_DEBUG_UPLOAD_COMPRESSION: 'gzip',
      DD_SERVICE: 'spanfuse-bench',
    },
    byDefault: true,
  },
  {
    name: 'dd-trace-tracer-only',
    description: 'dd-trace tracer without its profiler (separates tracer cost from profiler cost)',
    profiler: 'dd-trace',
    tracing: 'dd-trace',
    labels: 'none',
    env: {
      DD_PROFILING_ENABLED: 'false',
      DD_TRACE_AGENT_URL: '{sinkUrl}',
      DD_SERVICE: 'spanfuse-bench',
    },
    byDefault: false,
  },
];

export function findConfig(name: string): BenchConfig | undefined {
  return CONFIGS.find((c) => c.name === name);
}

export interface Placeholders {
  readonly outputDir: string;
  readonly otlpUrl: string;
  readonly sinkUrl: string;
  readonly windowMs: number;
}

/** Fill placeholders in every string of `value`, recursively. */
export function fillPlaceholders(value: unknown, p: Placeholders): unknown {
  if (typeof value === 'string') {
    if (value === '{windowMs}') return p.windowMs;
    return value
      .replaceAll('{outputDir}', p.outputDir)
      .replaceAll('{otlpUrl}', p.otlpUrl)
      .replaceAll('{sinkUrl}', p.sinkUrl)
      .replaceAll('{windowMs}', String(p.windowMs))
      .replaceAll('{windowS}', String(Math.max(1, Math.round(p.windowMs / 1000))));
  }
  if (Array.isArray(value)) return value.map((v) => fillPlaceholders(v, p));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = fillPlaceholders(v, p);
    return out;
  }
  return value;
}

export function fillEnv(env: Readonly<Record<string, string>> | undefined, p: Placeholders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env ?? {})) out[k] = String(fillPlaceholders(v, p));
  return out;
}
