import type { Profile } from '../core/index.js';

/**
 * What a heap sampler measures:
 * - `inuse`: objects still live at collection time (cumulative since start).
 * - `inuse+alloc`: live objects plus every sampled allocation of the window,
 *   including the ones the GC already collected.
 * - `alloc`: every sampled allocation of the window, live or collected; no
 *   live/dead split.
 */
export type HeapProfileKind = 'inuse' | 'inuse+alloc' | 'alloc';

/** Which V8 entry point drives the sampler. */
export type HeapBackend = 'pprof' | 'inspector';

/** Sample type names, as pprof and OTLP Profiles exporters carry them. */
export const INUSE_OBJECTS = 'inuse_objects';
export const INUSE_SPACE = 'inuse_space';
export const ALLOC_OBJECTS = 'alloc_objects';
export const ALLOC_SPACE = 'alloc_space';

/** The V8 sampling heap profiler, one per isolate, over one backend. */
export interface HeapSampler {
  readonly kind: HeapProfileKind;
  readonly backend: HeapBackend;
  readonly intervalBytes: number;
  /**
   * The window's heap profile; the next window starts right away. Undefined
   * when the sampler is stopped or collection failed (counted, never thrown).
   */
  collect(): Profile | undefined;
  /** Stop sampling and release V8's sample buffers. Idempotent. */
  stop(): void;
}
