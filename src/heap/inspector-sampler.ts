import { createRequire } from 'node:module';
import type { Session } from 'node:inspector';
import type { Profile } from '../core/index.js';
import type { Diagnostics } from '../core/index.js';
import { inspectorToPprof } from './inspector-profile.js';
import type { InspectorHeapProfile } from './inspector-profile.js';
import { ALLOC_SPACE } from './types.js';
import type { HeapSampler } from './types.js';
import { stampWindow } from './window-stamp.js';

type Post = (method: string, params: object, callback: (err: Error | null, result?: unknown) => void) => void;

// The inspector module throws at load time on builds without it; load lazily.
const require = createRequire(import.meta.url);

/**
 * Allocation sampling through the in-process inspector session, for runtimes
 * whose native binding cannot sample collected objects (Node 20, 22, 24).
 *
 * `HeapProfiler.startSampling` with `includeObjectsCollectedByMajorGC/MinorGC`
 * keeps a sample for every sampled allocation, live or collected, so the
 * window's profile is what the window allocated. Each `collect()` stops and
 * restarts sampling, which frees V8's sample buffer: memory held is bounded by
 * one window's allocations divided by the interval. If nobody collects for
 * `maxWindowMs`, an unref'd timer resets the buffer and counts the loss.
 *
 * In-process sessions answer synchronously, so no promise ever leaks into the
 * host; an answer that does not arrive synchronously is treated as a failure.
 *
 * Cost: V8's inspector agent runs a major GC on every profile fetch (measured
 * on Node 20 and 24), so each `collect()` is a forced full GC; see
 * docs/memory.md for the measured overhead. Hence opt-in.
 */
export class InspectorHeapSampler implements HeapSampler {
  readonly backend = 'inspector' as const;
  readonly kind = 'alloc' as const;
  readonly intervalBytes: number;
  readonly #session: Session;
  readonly #post: Post;
  readonly #diagnostics: Diagnostics;
  readonly #guard: NodeJS.Timeout;
  readonly #maxWindowMs: number;
  #running = true;
  #windowStartMs = Date.now();

  private constructor(session: Session, intervalBytes: number, maxWindowMs: number, diagnostics: Diagnostics) {
    this.#session = session;
    this.#post = session.post.bind(session);
    this.intervalBytes = intervalBytes;
    this.#maxWindowMs = maxWindowMs;
    this.#diagnostics = diagnostics;
    this.#guard = setInterval(() => {
      this.#dropStaleWindow();
    }, maxWindowMs);
    this.#guard.unref();
  }

  /** Start sampling; throws when the inspector or the V8 sampler is unavailable. */
  static start(intervalBytes: number, maxWindowMs: number, diagnostics: Diagnostics): InspectorHeapSampler {
    const inspector = require('node:inspector') as typeof import('node:inspector');
    const session = new inspector.Session();
    session.connect();
    try {
      const sampler = new InspectorHeapSampler(session, intervalBytes, maxWindowMs, diagnostics);
      sampler.#startSampling();
      return sampler;
    } catch (err) {
      session.disconnect();
      throw err;
    }
  }

  collect(): Profile | undefined {
    if (!this.#running) return undefined;
    const endMs = Date.now();
    try {
      const source = this.#restart();
      const profile = inspectorToPprof(source, this.intervalBytes);
      stampWindow(profile, this.#windowStartMs, endMs, ALLOC_SPACE);
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
    clearInterval(this.#guard);
    try {
      this.#call('HeapProfiler.stopSampling', {});
    } catch (err) {
      this.#diagnostics.error('heap.stop', err);
    }
    this.#session.disconnect();
  }

  #dropStaleWindow(): void {
    if (!this.#running || Date.now() - this.#windowStartMs < this.#maxWindowMs) return;
    try {
      this.#restart();
      this.#windowStartMs = Date.now();
      this.#diagnostics.count('heap.windows_dropped');
    } catch (err) {
      this.#diagnostics.error('heap.reset', err);
    }
  }

  /** Stop (returning the window's samples, freeing V8's buffer) and start again. */
  #restart(): InspectorHeapProfile {
    const stopped = this.#call('HeapProfiler.stopSampling', {}) as { profile?: InspectorHeapProfile } | undefined;
    this.#startSampling();
    if (stopped?.profile?.head === undefined) throw new Error('inspector returned no heap profile');
    return stopped.profile;
  }

  #startSampling(): void {
    this.#call('HeapProfiler.startSampling', {
      samplingInterval: this.intervalBytes,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  }

  #call(method: string, params: object): unknown {
    const answer: { done: boolean; error: Error | null; value: unknown } = { done: false, error: null, value: undefined };
    this.#post(method, params, (err, result) => {
      answer.done = true;
      answer.error = err;
      answer.value = result;
    });
    if (!answer.done) throw new Error(`inspector ${method} did not answer synchronously`);
    if (answer.error !== null) throw answer.error;
    return answer.value;
  }
}
