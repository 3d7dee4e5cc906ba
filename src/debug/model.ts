/**
 * The in-memory shape the flamegraph tools work on: rows of samples read
 * from pprof or OTLP window files (or live windows), with interned frames
 * and stacks, and the span labels they carry.
 */

/** Why a file or a selection cannot be used; `exitCode` is what the CLI returns. */
export type FlameErrorCode = 'usage' | 'input' | 'not-found';

export class FlameError extends Error {
  readonly code: FlameErrorCode;
  constructor(code: FlameErrorCode, message: string) {
    super(message);
    this.name = 'FlameError';
    this.code = code;
  }

  /** 2 usage, 3 unreadable/foreign/empty input, 4 nothing matches the selection. */
  get exitCode(): number {
    return this.code === 'usage' ? 2 : this.code === 'input' ? 3 : 4;
  }
}

/** One sample (or several merged) with its stack and labels. */
export interface Row {
  /** Index into `SampleStore.stacks`. */
  readonly stack: number;
  samples: number;
  wallNs: number;
  cpuNs: number;
  /** Explicit off-CPU value (off-CPU profiles); -1 when the source has none. */
  offNs: number;
  readonly spanId: string;
  readonly traceId: string;
  readonly spanName: string;
  readonly localRootSpanId: string;
  /** `profiler.tail.operation`, '' for samples of spans out of the tail. */
  readonly tailOperation: string;
  readonly tailQuantile: string;
  /** Sample time (Unix ns) when the source has one, else 0. */
  readonly timeNs: number;
  /** Index of the window (file) the row came from. */
  readonly window: number;
}

export interface WindowInfo {
  readonly file: string;
  readonly format: 'pprof' | 'otlp' | 'live';
  readonly profileId: string;
  readonly startNs: number;
  readonly endNs: number;
  /** Whether the source had per-sample CPU time. */
  readonly hasCpu: boolean;
}

/** Frames and stacks interned once across every window read. */
export class SampleStore {
  readonly names: string[] = [];
  readonly files: string[] = [];
  readonly lines: number[] = [];
  /** Frame ids, root first. */
  readonly stacks: (readonly number[])[] = [];
  readonly rows: Row[] = [];
  readonly windows: WindowInfo[] = [];
  readonly #frameIds = new Map<string, number>();
  readonly #stackIds = new Map<string, number>();

  frame(name: string, file: string, line: number): number {
    const key = `${name}\u0000${file}`;
    let id = this.#frameIds.get(key);
    if (id === undefined) {
      id = this.names.length;
      this.names.push(name === '' ? '(unknown)' : name);
      this.files.push(file);
      this.lines.push(line);
      this.#frameIds.set(key, id);
    }
    return id;
  }

  /** Intern a stack of frame ids, root first. */
  stack(frames: readonly number[]): number {
    const key = frames.join(',');
    let id = this.#stackIds.get(key);
    if (id === undefined) {
      id = this.stacks.length;
      this.stacks.push(frames);
      this.#stackIds.set(key, id);
    }
    return id;
  }

  hasWindow(profileId: string): boolean {
    return profileId !== '' && this.windows.some((w) => w.profileId === profileId);
  }
}

/** Label keys the tools read (the DESIGN.md contract plus the tail labels). */
export const KEYS = {
  spanId: 'span_id',
  traceId: 'trace_id',
  spanName: 'span_name',
  localRoot: 'local_root_span_id',
  tailOperation: 'profiler.tail.operation',
  tailQuantile: 'profiler.tail.quantile',
  timestamp: 'end_timestamp_ns',
} as const;

/** Which value of a sample type feeds which metric. */
export type MetricSlot = 'samples' | 'wall' | 'cpu' | 'off' | undefined;

export function metricSlot(type: string, unit: string): MetricSlot {
  if ((type === 'sample' || type === 'samples') && unit === 'count') return 'samples';
  if (type === 'wall' && unit === 'nanoseconds') return 'wall';
  if (type === 'cpu' && unit === 'nanoseconds') return 'cpu';
  if (type === 'off_cpu' && unit === 'nanoseconds') return 'off';
  return undefined;
}
