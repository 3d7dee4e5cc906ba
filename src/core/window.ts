import type { Profile } from './pprof.js';

/** How the sampler learns the active span. */
export type ContextMode = 'async-context-frame' | 'async-hooks';

/** Attribute values that travel on a window (profile-level, not per sample). */
export type AttributeValue = string | number | boolean;

/** A span that ended in the latency tail of its operation inside a window. */
export interface TailSpanRef {
  readonly spanId: string;
  readonly traceId: string;
  /** Operation key, e.g. `GET /users/:id (SERVER)`. */
  readonly operation: string;
  readonly quantile: string;
  readonly thresholdMs: number;
  readonly durationMs: number;
}

/**
 * One collection window: what flows from the sampler to the exporters.
 *
 * Profiles are pprof-format objects (the model @datadog/pprof produces); every
 * exporter encodes from them. Sample labels follow `core/labels.ts`. The wall
 * profile has sample types `sample/count`, `wall/nanoseconds` and, when CPU
 * time is collected, `cpu/nanoseconds`; each sample carries the numeric label
 * `end_timestamp_ns`.
 */
export interface WindowProfile {
  /** 32 lowercase hex characters (16 bytes); OTLP `profile_id`. */
  readonly profileId: string;
  /** Sequence number of this window in the process, from 0. */
  readonly seq: number;
  readonly startUnixNs: bigint;
  readonly endUnixNs: bigint;
  readonly samplingIntervalMicros: number;
  readonly mode: ContextMode;
  /** Wall/CPU time profile with span labels. */
  readonly wall: Profile;
  /** Heap (in-use) profile, when the heap sampler runs. */
  heap?: Profile;
  /** Off-CPU profile (thread states), when the thread-state sampler runs. */
  offCpu?: Profile;
  /** Profile-level attributes: mode, runtime, unsupported counters and why. */
  readonly attributes: Record<string, AttributeValue>;
  /** Tail spans whose samples this window holds. Filled before export. */
  readonly tailSpans: TailSpanRef[];
}
