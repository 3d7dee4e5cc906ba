/**
 * Starting each profiler inside the service process, before the app loads
 * `node:http` (spanfuse's rule 7; dd-trace needs it for its http plugin, which
 * it gets from its `--import dd-trace/initialize.mjs` preload).
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ServerSpec } from './protocol.js';

/** Runs `fn` with the request's span id on the profiler's samples. */
export type Labeler = (spanIdHex: string, fn: () => void) => void;

export interface StartedProfiler {
  readonly labeler?: Labeler;
  stats(): unknown;
  shutdown(): Promise<void>;
}

export function benchRequire(spec: ServerSpec): NodeJS.Require {
  return createRequire(join(spec.repoRoot, 'bench', 'package.json'));
}

export async function startProfiler(spec: ServerSpec): Promise<StartedProfiler> {
  switch (spec.profiler) {
    case 'none':
      return { stats: () => undefined, shutdown: () => Promise.resolve() };
    case 'spanfuse':
      return startSpanfuse(spec);
    case 'pyroscope':
      return startPyroscope(spec);
    case 'dd-trace':
      return startDdTrace(spec);
    case 'pprof':
      return startRawPprof(spec);
  }
}

interface SpanfuseHandle {
  shutdown(): Promise<unknown>;
  flush?(): Promise<unknown>;
  stats?(): unknown;
}

async function startSpanfuse(spec: ServerSpec): Promise<StartedProfiler> {
  const mod = await import(pathToFileURL(spec.spanfuseModule).href);
  let handle: SpanfuseHandle | undefined;
  if (spec.spanfuseEntry === 'start') {
    handle = (await mod.start(spec.spanfuseOptions)) as SpanfuseHandle;
  } else if (typeof mod.current === 'function') {
    // Preload mode: the handle, if the package exposes one, belongs to register.js.
    handle = mod.current() as SpanfuseHandle | undefined;
  }
  return {
    stats: () => handle?.stats?.(),
    shutdown: async () => {
      await handle?.shutdown();
    },
  };
}

/** The preload flag for spanfuse's register entry, next to its index module. */
export function spanfuseRegisterArgv(spanfuseModule: string): string[] {
  return ['--import', pathToFileURL(join(dirname(spanfuseModule), 'register.js')).href];
}

/** The documented ESM preload of dd-trace (tracer init + loader hook). */
export function ddTraceArgv(repoRoot: string): string[] {
  const req = createRequire(join(repoRoot, 'bench', 'package.json'));
  const main = req.resolve('dd-trace');
  return ['--import', pathToFileURL(join(dirname(main), 'initialize.mjs')).href];
}

function startPyroscope(spec: ServerSpec): StartedProfiler {
  const Pyroscope = benchRequire(spec)('@pyroscope/nodejs');
  Pyroscope.init({
    appName: 'spanfuse-bench',
    serverAddress: spec.sinkUrl,
    flushIntervalMs: spec.windowMs,
  });
  Pyroscope.start();
  return {
    labeler: (spanIdHex, fn) => {
      Pyroscope.wrapWithLabels({ span_id: spanIdHex }, fn);
    },
    stats: () => undefined,
    shutdown: async () => {
      await Pyroscope.stop();
    },
  };
}

function startDdTrace(spec: ServerSpec): StartedProfiler {
  // Already initialised by the --import preload; loading it here only checks
  // that the preload worked (same singleton).
  benchRequire(spec)('dd-trace');
  return {
    stats: () => undefined,
    // dd-trace exports on its own upload period; the harness runs long enough
    // for several uploads inside the measured window, and reads what arrived.
    shutdown: () => Promise.resolve(),
  };
}

/**
 * @datadog/pprof's wall sampler and nothing else: what any profiler built on
 * it pays at least. Each window is rotated and gzip-encoded (as a profiler
 * that exports would), then dropped.
 */
async function startRawPprof(spec: ServerSpec): Promise<StartedProfiler> {
  const { time, encode } = await import('@datadog/pprof');
  const intervalMicros = Number(process.env['BENCH_PPROF_INTERVAL_US'] ?? '10000');
  const contexts = process.env['BENCH_PPROF_CONTEXTS'] === '1';
  // With contexts: as spanfuse starts it (CPED where the runtime has
  // AsyncContextFrame, CPU time per sample, no V8-bug workaround).
  const { isAsyncContextFrameActive } = await import('@datadog/pprof/out/src/async-context-frame.js');
  const cped = contexts && isAsyncContextFrameActive();
  time.start({
    intervalMicros,
    durationMillis: spec.windowMs,
    withContexts: contexts,
    useCPED: cped,
    collectCpuTime: contexts && process.env['BENCH_PPROF_CPU_TIME'] !== '0',
    workaroundV8Bug: !contexts,
    lineNumbers: false,
  });
  let windows = 0;
  let bytes = 0;
  const timer = setInterval(() => {
    void encode(time.stop(true)).then((b) => {
      windows++;
      bytes += b.length;
    });
  }, spec.windowMs);
  timer.unref();
  // One context per request, entered around its work (in hooks mode the
  // global slot, set for the request's synchronous part only).
  const labeler: Labeler | undefined = !contexts || process.env['BENCH_PPROF_LABEL'] === '0'
    ? undefined
    : cped
      ? (spanIdHex, fn) => time.runWithContext({ span_id: spanIdHex }, fn)
      : (spanIdHex, fn) => {
          time.setContext({ span_id: spanIdHex });
          fn();
        };
  return {
    ...(labeler === undefined ? {} : { labeler }),
    stats: () => ({ intervalMicros, windows, bytes }),
    shutdown: () => {
      clearInterval(timer);
      if (time.isStarted()) time.stop();
      return Promise.resolve();
    },
  };
}
