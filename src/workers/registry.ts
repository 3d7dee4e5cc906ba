import { getEnvironmentData, isMainThread, setEnvironmentData, threadId } from 'node:worker_threads';

/**
 * A process-wide table, shared by every thread, that says per worker whether
 * spanfuse runs in it (so `terminate()` can ask it to flush first) and whether
 * it is being terminated (so a half-started preload stays silent). Created by
 * the first thread that asks, normally the main thread under the preload, and
 * handed to workers through worker_threads environment data (copied into each
 * worker when it is created). Slots are indexed by `threadId % SLOTS` and hold
 * `threadId * 4 + flags`, so a slot reused after wrap-around is told apart.
 */
const KEY = 'spanfuse.workers.registry';
const SLOTS = 1 << 14;
const PROFILED = 1;
const TERMINATING = 2;

let table: Int32Array | undefined;

function shared(): Int32Array | undefined {
  if (table !== undefined) return table;
  try {
    const found = getEnvironmentData(KEY);
    if (found instanceof SharedArrayBuffer) {
      table = new Int32Array(found);
    } else if (isMainThread) {
      const sab = new SharedArrayBuffer(SLOTS * 4);
      setEnvironmentData(KEY, sab);
      table = new Int32Array(sab);
    }
  } catch {
    // no shared table: flush-before-terminate and silence are off
  }
  return table;
}

/** Publish the table to workers created from now on (main thread, preload). */
export function ensureRegistry(): boolean {
  return shared() !== undefined;
}

function update(id: number, set: number): void {
  const t = shared();
  if (t === undefined || id <= 0 || id > 0x1fffffff) return;
  const i = id % SLOTS;
  for (;;) {
    const old = Atomics.load(t, i);
    const flags = old >>> 2 === id ? old & 3 : 0;
    if (Atomics.compareExchange(t, i, old, id * 4 + (flags | set)) === old) return;
  }
}

function flags(id: number): number {
  const t = shared();
  if (t === undefined || id <= 0) return 0;
  const v = Atomics.load(t, id % SLOTS);
  return v >>> 2 === id ? v & 3 : 0;
}

/** In a worker: spanfuse runs here and answers flush requests. */
export function markProfiled(): void {
  if (!isMainThread) update(threadId, PROFILED);
}

/** Before a worker's termination starts (any thread's `terminate()` hook). */
export function markTerminating(id: number): void {
  update(id, TERMINATING);
}

export function isProfiled(id: number): boolean {
  return (flags(id) & PROFILED) !== 0;
}

/** In a worker: its parent has begun terminating it. */
export function selfTerminating(): boolean {
  return !isMainThread && (flags(threadId) & TERMINATING) !== 0;
}
