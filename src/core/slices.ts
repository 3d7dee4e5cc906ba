import { performance } from 'node:perf_hooks';
import { addSelfTime, addStageTime } from './self-time.js';
import type { SelfStage } from './self-time.js';

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

/**
 * Entries (samples, locations, functions, strings) per step of the sliced
 * encoders and the scrubber: small enough that a step stays well inside a
 * slice's budget. In a process's first windows this code has not been
 * optimized yet: with 128, single steps took up to 3-5 ms under the
 * event-loop bench's span load (`stats().selfTime.stagesLongestStepMs`).
 */
export const STEP_ENTRIES = 64;

/**
 * Longest a step should run before it yields early (ms). Warm, a step of
 * STEP_ENTRIES takes well under this; in a process's first windows, the
 * same entries run interpreted and compiled on first call, and single steps
 * took 4-7 ms (`stats().selfTime.stagesLongestStepMs`, HTTP service).
 */
export const STEP_MAX_MS = 1;

/**
 * For a generator that yields every `every` entries, or sooner once the
 * step has run {@link STEP_MAX_MS}:
 * `const due = stepEvery(slice); for (...) { if (due()) yield; ... }`.
 * The clock is read at a step's first entry and then every eighth of
 * `every` entries (at most every 8th; every entry when `every` <= 15). An
 * unbounded step (`every` Infinity: the synchronous exit path) reads it
 * every 8th entry too.
 */
export function stepEvery(every: number, maxMs = STEP_MAX_MS): () => boolean {
  // `Infinity >> 3` is 0: without the test, a clock read per entry.
  const clockEvery = Math.max(1, Math.min(8, Number.isFinite(every) ? every >> 3 : 8));
  let n = 0;
  let startedAt = 0;
  return () => {
    if (++n >= every) {
      n = 0;
      return true;
    }
    if (n === 1) {
      startedAt = performance.now();
      return false;
    }
    if (n % clockEvery !== 0 || performance.now() - startedAt < maxMs) return false;
    n = 0;
    return true;
  };
}

/** Default time a slice may take before the loop gets a turn (ms). */
export const SLICE_BUDGET_MS = 2;

/**
 * Run the steps in slices of at most about `budgetMs`, one slice per
 * event-loop turn, starting on a later turn (never in the caller's). Every
 * sliced job of the thread shares one queue and one budget per turn, oldest
 * job first: a window being built, scrubbed and encoded at the same time
 * still costs the loop one slice per turn, not one per job. A slice ends
 * before a step that would likely take it past the budget (judged by that
 * job's previous step), so only a slice's first step can overrun it.
 */
export function runSliced<T>(steps: Steps<T>, budgetMs = SLICE_BUDGET_MS): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    queue.push({ steps, budgetMs, lastStepMs: 0, resolve: resolve as (v: unknown) => void, reject });
    if (!pumping) {
      pumping = true;
      setImmediate(pump);
    }
  });
}

interface Job {
  readonly steps: Steps<unknown>;
  readonly budgetMs: number;
  /** How long this job's last step took (ms): the guess for its next one. */
  lastStepMs: number;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: unknown) => void;
}

const queue: Job[] = [];
let pumping = false;
let inSlice = false;

/**
 * Whether this thread is inside a slice right now: true only for code that
 * interrupted one (a worker's flush request delivered by the inspector),
 * which must then leave the jobs alone.
 */
export function sliceRunning(): boolean {
  return inSlice;
}

/** One turn's slice: steps of the oldest jobs until the budget is spent. */
function pump(): void {
  const start = performance.now();
  inSlice = true;
  try {
    pumpSteps(start);
  } finally {
    inSlice = false;
    addSelfTime('sliced', performance.now() - start);
  }
  if (queue.length > 0) setImmediate(pump);
  else pumping = false;
}

function pumpSteps(start: number): void {
  let now = start;
  let first = true;
  while (queue.length > 0) {
    const job = queue[0] as Job;
    // Leave the next step to the next turn when it would likely overrun.
    if (!first && now - start + job.lastStepMs > job.budgetMs) break;
    first = false;
    const before = now;
    try {
      const r = job.steps.next();
      if (r.done === true) {
        queue.shift();
        job.resolve(r.value);
      }
    } catch (err) {
      queue.shift();
      job.reject(err);
    }
    now = performance.now();
    job.lastStepMs = now - before;
    if (now - start >= job.budgetMs) break;
  }
}

/** Time of the steps run inside the step being timed by the innermost `staged` (ms). */
let nestedMs = 0;

/**
 * `steps` as `stage`: the time of each of its steps that runs inside a slice
 * is added to the stage's total (`stats().selfTime.stagesMs`), less what
 * stages nested in it took. Steps run by `runSync` (the exit path) are not
 * counted, as for `slicedMs`. Two clock reads per step.
 */
export function* staged<T>(stage: SelfStage, steps: Steps<T>): Steps<T> {
  let done = false;
  try {
    for (;;) {
      const outer = nestedMs;
      nestedMs = 0;
      const start = performance.now();
      let r: IteratorResult<void, T>;
      try {
        r = steps.next();
      } finally {
        const ms = performance.now() - start;
        if (inSlice) addStageTime(stage, ms - nestedMs);
        nestedMs = outer + ms;
      }
      if (r.done === true) {
        done = true;
        return r.value;
      }
      yield;
    }
  } finally {
    // Closed early (as `yield*` would): the inner steps' own cleanup runs.
    if (!done) steps.return(undefined as T);
  }
}
