import { performance } from 'node:perf_hooks';

/**
 * Work cut into steps: a generator that yields between small pieces of work
 * and returns its result. The same steps run either all at once (`runSync`,
 * for the process `exit` path) or spread over event-loop turns
 * (`runSliced`), so long window work never blocks the host's loop.
 */
export type Steps<T> = Generator<void, T, void>;

/** Run every step now. */
export function runSync<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done === true) return r.value;
  }
}

/** Default time a slice may take before the loop gets a turn (ms). */
export const SLICE_BUDGET_MS = 2;

/**
 * Run the steps in slices of at most about `budgetMs` (one step may overrun
 * it), with a `setImmediate` turn between slices so I/O and timers run.
 */
export async function runSliced<T>(steps: Steps<T>, budgetMs = SLICE_BUDGET_MS): Promise<T> {
  for (;;) {
    const until = performance.now() + budgetMs;
    for (;;) {
      const r = steps.next();
      if (r.done === true) return r.value;
      if (performance.now() >= until) break;
    }
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
