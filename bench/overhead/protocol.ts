/**
 * Messages between the harness and its two kinds of child process (the
 * service under test and the load generator), over the Node IPC channel.
 * Nothing here goes over HTTP, so the measured service serves only the load.
 */

/** What the harness tells a server process to be (JSON in BENCH_SERVER_SPEC). */
export interface ServerSpec {
  readonly config: string;
  readonly profiler: 'none' | 'spanfuse' | 'pyroscope' | 'dd-trace' | 'pprof';
  readonly tracing: 'otel-basic' | 'spanfuse' | 'dd-trace' | 'none';
  readonly labels: 'none' | 'pyroscope-wrap' | 'pprof-context';
  readonly appTracingFirst: boolean;
  readonly spanfuseEntry: 'start' | 'register';
  readonly spanfuseModule: string;
  readonly spanfuseOptions: Record<string, unknown>;
  readonly sinkUrl: string;
  readonly windowMs: number;
  /** Iterations of the CPU kernel per work unit (see app.ts). */
  readonly unitIterations: number;
  /** Memory sample period while measuring. */
  readonly memorySampleMs: number;
  /** Soak: force a GC before each heap sample (needs --expose-gc). */
  readonly gcBeforeSample: boolean;
  /** Repo root, to find the peers in bench/node_modules. */
  readonly repoRoot: string;
  readonly dataDir: string;
}

export interface MemorySample {
  /** ms since mark */
  readonly tMs: number;
  readonly rss: number;
  readonly heapUsed: number;
  readonly heapTotal: number;
  readonly external: number;
  readonly arrayBuffers?: number;
  /** glibc `mallinfo2()`: bytes in use (small + mmapped chunks), soak with BENCH_MALLINFO=1 only. */
  readonly mallocInUse?: number;
  /** ... and bytes malloc holds from the system in its arenas (in use or free). */
  readonly mallocArena?: number;
  /** Soaks on Linux: /proc/self/status RssAnon and RssFile (bytes). */
  readonly rssAnon?: number;
  readonly rssFile?: number;
}

export interface ServerReport {
  readonly wallMs: number;
  readonly cpuUserMicros: number;
  readonly cpuSystemMicros: number;
  /** Requests completed by the server inside the measured window. */
  readonly requests: number;
  readonly errors: number;
  readonly memory: readonly MemorySample[];
  /** spanfuse `stats()` or the peer's equivalent, if any. */
  readonly profilerStats?: unknown;
  /** spanfuse's own periodic work inside the measured window (ms; `stats().selfTime`, all kinds). */
  readonly selfMs?: number;
  /** The same work's sliced part by stage (ms; `stats().selfTime.stagesMs`), where reported. */
  readonly selfStagesMs?: Readonly<Record<string, number>>;
  /**
   * The main thread's CPU inside the service's fixed work (the kernel calls)
   * in the measured window, µs, estimated from every 8th call timed with the
   * thread's CPU clock; only with `BENCH_FIXED_CPU=1` (see work.ts).
   */
  readonly fixedCpuMicros?: number;
  /** Where the RSS is at the end of the measured window, bytes ({@link MEMORY_PARTS}). */
  readonly memoryParts?: Record<MemoryPart, number>;
}

/**
 * The parts of a server's RSS: V8's spaces by their resident size (new space
 * is both semi-spaces), memory V8 reports as external (array buffers,
 * strings and buffers held natively), and the rest (native code, stacks,
 * malloc outside V8's accounting), which is RSS minus the others.
 */
export const MEMORY_PARTS = ['newSpace', 'oldSpace', 'codeSpace', 'largeObjects', 'otherSpaces', 'external', 'outsideHeap'] as const;
export type MemoryPart = (typeof MEMORY_PARTS)[number];

export interface ServerBye {
  /** Ground truth: per unique function, the span ids (lowercase hex) that ran it. */
  readonly groundTruth: Record<string, string[]>;
  /** Requests seen over the server's life, and ring capacity. */
  readonly totalRequests: number;
  readonly ringCapacity: number;
  /** False when spans were not recording (no tracer provider took over). */
  readonly spansRecording: boolean;
  readonly shutdownError?: string;
}

export type ToServer =
  | { readonly type: 'mark' }
  | { readonly type: 'report' }
  | { readonly type: 'memory' }
  | { readonly type: 'shutdown' };

export type FromServer =
  | { readonly type: 'ready'; readonly port: number; readonly info: Record<string, unknown> }
  | { readonly type: 'failed'; readonly error: string }
  | { readonly type: 'marked' }
  | { readonly type: 'report'; readonly report: ServerReport }
  | { readonly type: 'memory'; readonly sample: MemorySample }
  | { readonly type: 'bye'; readonly bye: ServerBye };

export interface LoadRun {
  readonly url: string;
  readonly paths: readonly string[];
  readonly connections: number;
  readonly durationSec: number;
}

export interface LoadResult {
  readonly requests: number;
  readonly durationSec: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly latencyMs: { readonly p50: number; readonly p90: number; readonly p99: number; readonly max: number };
}

export type ToLoad = { readonly type: 'run'; readonly run: LoadRun } | { readonly type: 'exit' };
export type FromLoad = { readonly type: 'ready' } | { readonly type: 'done'; readonly result: LoadResult } | { readonly type: 'failed'; readonly error: string };
