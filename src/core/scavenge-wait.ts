import { PerformanceObserver, constants } from 'node:perf_hooks';
import type { PerformanceEntry } from 'node:perf_hooks';

/** What ended a wait: a scavenge, the time limit, or `release()` (also a wait of 0). */
export type WaitEnd = 'scavenge' | 'limit' | 'released';

/**
 * Waits for the thread's next young-generation collection (scavenge).
 *
 * A window is built, scrubbed, encoded and written in slices over some
 * 50-200 ms, and every object of it that is alive when a scavenge runs is
 * copied, and promoted at the second one: ~1-1.5 MB per window close under
 * span load (`bench/gc/survivors.ts`), the largest scavenge pauses of a
 * profiled process, and a reason V8 grows the young generation. Started
 * right after a scavenge, that work usually ends before the next one (under
 * load they come every few hundred ms to seconds), and the window dies young.
 *
 * The observer exists only while someone waits. `release()` ends every wait
 * at once (a flush or shutdown does not wait for the garbage collector).
 */
export class ScavengeWait {
  #observer: PerformanceObserver | undefined;
  #timer: NodeJS.Timeout | undefined;
  #waiters: ((why: WaitEnd) => void)[] = [];

  /**
   * Resolves after the next scavenge, after `maxWaitMs`, or on `release()`,
   * whichever comes first. The timer does not keep the process alive: an
   * exiting process builds what waits synchronously. Resolves with what
   * ended the wait.
   */
  wait(maxWaitMs: number): Promise<WaitEnd> {
    if (!(maxWaitMs > 0)) return Promise.resolve('released');
    return new Promise<WaitEnd>((resolve) => {
      this.#waiters.push(resolve);
      try {
        this.#observer ??= this.#observe();
      } catch {
        // No GC entries here: wait for the timer alone.
      }
      if (this.#timer === undefined) {
        this.#timer = setTimeout(() => this.release('limit'), maxWaitMs);
        this.#timer.unref();
      }
    });
  }

  /** Ends every wait now. */
  release(why: WaitEnd = 'released'): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#observer?.disconnect();
    this.#observer = undefined;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const resolve of waiters) resolve(why);
  }

  #observe(): PerformanceObserver {
    const observer = new PerformanceObserver((list) => {
      if (list.getEntries().some(isScavenge)) this.release('scavenge');
    });
    observer.observe({ entryTypes: ['gc'] });
    return observer;
  }
}

function isScavenge(e: PerformanceEntry): boolean {
  const detail = (e as { detail?: { kind?: number } }).detail;
  return detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR;
}
