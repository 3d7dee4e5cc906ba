// Its own module, not the package index (see core/dd-pprof.ts).
import heap from '@datadog/pprof/out/src/heap-profiler.js';
import type { Profile } from '../core/index.js';
import type { Diagnostics } from '../core/index.js';
import { ALLOC_SPACE, INUSE_SPACE } from './types.js';
import type { HeapProfileKind, HeapSampler } from './types.js';
import { stampWindow } from './window-stamp.js';

/**
 * The sampling heap profiler through @datadog/pprof's native binding.
 *
 * Without `allocations` V8 keeps a sample only while its object is live, so
 * the buffer is bounded by the live heap divided by the interval, and each
 * profile is the in-use heap at collection time.
 *
 * With `allocations` (runtimes whose V8 reports live/dead per sample, Node 26)
 * the binding also keeps collected samples and resets them after each
 * profile; every collection forces one full GC to classify samples.
 */
export class PprofHeapSampler implements HeapSampler {
  readonly backend = 'pprof' as const;
  readonly kind: HeapProfileKind;
  readonly intervalBytes: number;
  readonly #diagnostics: Diagnostics;
  #running = true;
  #windowStartMs = Date.now();

  private constructor(kind: HeapProfileKind, intervalBytes: number, diagnostics: Diagnostics) {
    this.kind = kind;
    this.intervalBytes = intervalBytes;
    this.#diagnostics = diagnostics;
  }

  /**
   * Start the native sampler. With `allocations`, returns undefined when the
   * runtime cannot sample collected objects (feature test: the binding
   * refuses), so the caller can pick another backend. Throws only what the
   * binding throws for other reasons (caller counts it).
   */
  static start(
    intervalBytes: number,
    stackDepth: number,
    allocations: boolean,
    diagnostics: Diagnostics,
  ): PprofHeapSampler | undefined {
    if (allocations) {
      try {
        heap.start(intervalBytes, stackDepth, true);
      } catch {
        // The binding refuses allocation mode on V8s without live/dead stats
        // (and leaves itself stopped).
        return undefined;
      }
      return new PprofHeapSampler('inuse+alloc', intervalBytes, diagnostics);
    }
    heap.start(intervalBytes, stackDepth, false);
    return new PprofHeapSampler('inuse', intervalBytes, diagnostics);
  }

  collect(): Profile | undefined {
    if (!this.#running) return undefined;
    const endMs = Date.now();
    try {
      const profile = heap.profile();
      stampWindow(profile, this.#windowStartMs, endMs, this.kind === 'inuse' ? INUSE_SPACE : ALLOC_SPACE);
      this.#windowStartMs = endMs;
      return profile;
    } catch (err) {
      this.#diagnostics.error('heap.collect', err);
      return undefined;
    }
  }

  stop(): void {
    if (!this.#running) return;
    this.#running = false;
    try {
      heap.stop();
    } catch (err) {
      this.#diagnostics.error('heap.stop', err);
    }
  }
}
