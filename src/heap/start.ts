import type { Diagnostics } from '../core/index.js';
import { InspectorHeapSampler } from './inspector-sampler.js';
import { PprofHeapSampler } from './pprof-sampler.js';
import type { HeapSampler } from './types.js';

export interface HeapSamplerOptions {
  readonly intervalBytes: number;
  readonly stackDepth: number;
  /** Sample collected objects too (allocated space per window). */
  readonly allocations: boolean;
  /**
   * Allocation mode only: longest a window may stay uncollected before its
   * samples are dropped to bound memory. Default 5 minutes.
   */
  readonly maxWindowMs?: number;
}

const DEFAULT_MAX_WINDOW_MS = 5 * 60_000;

/**
 * Start the heap sampler that best serves `options` on this runtime, by
 * feature test, never by version:
 * 1. allocations requested and the native binding accepts allocation mode
 *    (Node 26): in-use + allocated from one sampler;
 * 2. allocations requested otherwise: allocated space through the
 *    in-process inspector (no in-use view: V8 runs one sampler per isolate);
 * 3. in-use only through the native binding.
 * Returns undefined when no sampler can run; the reason is counted and
 * reported once through `diagnostics`. Never throws.
 */
export function startHeapSampler(options: HeapSamplerOptions, diagnostics: Diagnostics): HeapSampler | undefined {
  const { intervalBytes, stackDepth } = options;
  if (options.allocations) {
    try {
      const native = PprofHeapSampler.start(intervalBytes, stackDepth, true, diagnostics);
      if (native !== undefined) return native;
    } catch (err) {
      diagnostics.error('heap.start', err);
      return undefined;
    }
    try {
      return InspectorHeapSampler.start(intervalBytes, options.maxWindowMs ?? DEFAULT_MAX_WINDOW_MS, diagnostics);
    } catch (err) {
      diagnostics.error('heap.start.allocations', err);
      diagnostics.warnOnce('heap.allocations', 'spanfuse: allocation sampling unavailable; heap profile is in-use only');
    }
  }
  try {
    return PprofHeapSampler.start(intervalBytes, stackDepth, false, diagnostics);
  } catch (err) {
    diagnostics.error('heap.start', err);
    return undefined;
  }
}
