import type { HeapConfig } from '../config/heap.js';
import type { Diagnostics, WindowProfile } from '../core/index.js';
import { attributeWindow } from './attribute.js';
import type { AttributionOptions } from './attribute.js';
import { addGcTotalsSteps } from './gc.js';
import type { Steps } from '../core/slices.js';
import { startHeapSampler } from './start.js';
import type { HeapSampler } from './types.js';

/** Operations listed in the window's `profiler.heap.operations` attribute. */
const TOP_OPERATIONS = 10;

/**
 * The memory stage as the pipeline uses it: one heap sampler for the thread,
 * and at each window rotation the heap profile attached to the window, its
 * samples labelled with `operation` (and `span_id`) where the attribution is
 * unambiguous, and window attributes:
 * - `profiler.heap.kind` (`inuse`, `alloc`, `inuse+alloc`), `profiler.heap.backend`,
 *   `profiler.heap.interval_bytes`;
 * - `profiler.heap.operations`: JSON array of the top operations,
 *   `[{"operation","bytes","share"}]`, by allocated bytes (in-use bytes when
 *   the runtime only samples live objects);
 * - the GC totals of `addGcTotalsSteps`.
 */
export class HeapStage {
  readonly #sampler: HeapSampler;
  readonly #diagnostics: Diagnostics;
  readonly #attribution: AttributionOptions;

  private constructor(sampler: HeapSampler, diagnostics: Diagnostics, attribution: AttributionOptions) {
    this.#sampler = sampler;
    this.#diagnostics = diagnostics;
    this.#attribution = attribution;
  }

  /** Undefined when disabled or when no sampler can run here (reported once). */
  static start(config: HeapConfig, diagnostics: Diagnostics, attribution: AttributionOptions = {}): HeapStage | undefined {
    if (!config.enabled) return undefined;
    const sampler = startHeapSampler(config, diagnostics);
    return sampler === undefined ? undefined : new HeapStage(sampler, diagnostics, attribution);
  }

  get sampler(): HeapSampler {
    return this.#sampler;
  }

  /**
   * Collect the heap window and fill `window` (run right after the wall
   * window is rotated, before scrubbing/export), in steps: the heap window
   * is collected first (its end as close to the wall window's as can be),
   * then the GC totals a few hundred samples at a time, then the
   * attribution in one step. Never throws.
   */
  *fillSteps(window: WindowProfile): Steps<void> {
    const heap = this.#sampler.collect();
    yield* addGcTotalsSteps(window, this.#diagnostics);
    if (heap === undefined) return;
    yield;
    window.heap = heap;
    window.attributes['profiler.heap.kind'] = this.#sampler.kind;
    window.attributes['profiler.heap.backend'] = this.#sampler.backend;
    window.attributes['profiler.heap.interval_bytes'] = this.#sampler.intervalBytes;
    try {
      const { operations } = attributeWindow(heap, window.wall, this.#attribution);
      const top = operations.slice(0, TOP_OPERATIONS).map((o) => ({
        operation: o.operation,
        bytes: o.bytes,
        share: Number(o.share.toFixed(4)),
      }));
      window.attributes['profiler.heap.operations'] = JSON.stringify(top);
    } catch (err) {
      this.#diagnostics.error('heap.attribution', err);
    }
  }

  /** Idempotent. */
  stop(): void {
    this.#sampler.stop();
  }
}
