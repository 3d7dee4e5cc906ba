import { getEnvironmentData, isMainThread, setEnvironmentData, threadId } from 'node:worker_threads';
import { fs } from '../core/builtins.js';
import { procThreadSelfTid } from '../core/proc-tid.js';

/**
 * A process-wide table, shared by every thread, that says per worker whether
 * spanfuse runs in it (so `terminate()` can ask it to flush first) and whether
 * it is being terminated (so a half-started preload stays silent). Created by
 * the first thread that asks, normally the main thread under the preload, and
 * handed to workers through worker_threads environment data (copied into each
 * worker when it is created). Slots are indexed by `threadId % SLOTS` and hold
 * `threadId << SHIFT | flags`, so a slot reused after wrap-around is told apart.
 */
const KEY = 'spanfuse.workers.registry';
const SLOTS = 1 << 14;
const PROFILED = 1;
const TERMINATING = 2;
/** The worker answered a flush request. */
const FLUSHED = 4;
/** ... and wrote its open window first. */
const WROTE = 8;
/** ... but was closing a window when asked: ask again shortly. */
const BUSY = 16;
const ANSWER = FLUSHED | WROTE | BUSY;
/** The worker was created with spanfuse's preload (set by the creating thread). */
const PRELOADING = 32;
/** ... and the preload's module graph is loaded (set by the worker). */
const PRELOADED = 64;
/** The worker is running a flush request, inside the inspector's interrupt (set by the worker). */
const INSIDE = 128;
/** Its termination is about to proceed: a flush request starting now does nothing (set by the main thread). */
const GATED = 256;
/**
 * The worker is loading one of spanfuse's stages with require(esm) outside
 * the preload (its own code called start(); set and cleared by the worker).
 */
const STAGE_LOADING = 512;
const SHIFT = 10;
const MASK = (1 << SHIFT) - 1;
/**
 * Thread ids are kept modulo this (`tag << SHIFT | MASK` stays a positive
 * int32): two workers 2^21 ids apart never share a slot's lifetime.
 */
const TAG_MASK = (1 << (31 - SHIFT)) - 1;

/** A worker's answer to a flush request. */
export type FlushAnswer = 'wrote' | 'empty' | 'busy';

/**
 * A second table beside the registry, same slots: the OS thread id (Linux
 * tid) of a worker that set STAGE_LOADING, so the process's exit can tell a
 * worker still loading from one that died in the middle of a load without
 * clearing its bit (see {@link waitStageLoadsSync}).
 */
const TIDS_KEY = 'spanfuse.workers.tids';

let table: Int32Array | undefined;
let tids: Int32Array | undefined;

/** ES2024 `Atomics.waitAsync` (V8 has it since Node 16; the TS lib here is older). */
interface AtomicsWaitAsync {
  waitAsync(t: Int32Array, index: number, value: number, timeoutMs: number): { async: false; value: string } | { async: true; value: Promise<string> };
}

function shared(): Int32Array | undefined {
  if (table !== undefined) return table;
  try {
    const found = getEnvironmentData(KEY);
    const foundTids = getEnvironmentData(TIDS_KEY);
    if (found instanceof SharedArrayBuffer) {
      table = new Int32Array(found);
      // absent when an older spanfuse made the table: no liveness check then
      if (foundTids instanceof SharedArrayBuffer && foundTids.byteLength === found.byteLength) tids = new Int32Array(foundTids);
    } else if (isMainThread) {
      const sab = new SharedArrayBuffer(SLOTS * 4);
      const tidSab = new SharedArrayBuffer(SLOTS * 4);
      setEnvironmentData(TIDS_KEY, tidSab);
      setEnvironmentData(KEY, sab);
      table = new Int32Array(sab);
      tids = new Int32Array(tidSab);
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

function update(id: number, set: number, clear = 0): void {
  const t = shared();
  if (t === undefined || id <= 0) return;
  const i = id % SLOTS;
  const tag = id & TAG_MASK;
  for (;;) {
    const old = Atomics.load(t, i);
    const flags = old >>> SHIFT === tag ? old & MASK : 0;
    if (Atomics.compareExchange(t, i, old, (tag << SHIFT) | ((flags & ~clear) | set)) === old) break;
  }
  Atomics.notify(t, i);
}

function flags(id: number): number {
  const t = shared();
  if (t === undefined || id <= 0) return 0;
  const v = Atomics.load(t, id % SLOTS);
  return v >>> SHIFT === (id & TAG_MASK) ? v & MASK : 0;
}

/** In a worker: spanfuse runs here and answers flush requests. */
export function markProfiled(): void {
  if (!isMainThread) update(threadId, PROFILED);
}

/** Before a worker's termination starts (any thread's `terminate()` hook). */
export function markTerminating(id: number): void {
  update(id, TERMINATING);
}

/**
 * In a worker: spanfuse no longer answers flush requests here (it stopped,
 * or the thread's own exit wrote its window). terminate() and the process's
 * exit then skip it, and a wait for its answer ends.
 */
export function markUnprofiled(): void {
  if (!isMainThread) update(threadId, 0, PROFILED);
}

export function isProfiled(id: number): boolean {
  return (flags(id) & PROFILED) !== 0;
}

/**
 * Whether the main thread has gated worker `id` (see
 * {@link gateAndWaitOutsideSync}): its termination is under way and it
 * serves no flush request any more.
 */
export function isGated(id: number): boolean {
  return (flags(id) & GATED) !== 0;
}

/** In a worker: its parent has begun terminating it. */
export function selfTerminating(): boolean {
  return !isMainThread && (flags(threadId) & TERMINATING) !== 0;
}

/**
 * In a worker that answered a flush request: say so, and what it did.
 * (The worker does not wait for the termination: on Node 20 an
 * Atomics.wait inside the inspector's evaluation that terminate() then
 * interrupts is a fatal V8 check. Nothing a worker does after a flush may
 * use fs/promises instead; see sync-output.ts and inject.ts.)
 */
export function markFlushed(answer: FlushAnswer): void {
  if (!isMainThread) update(threadId, FLUSHED | (answer === 'wrote' ? WROTE : answer === 'busy' ? BUSY : 0));
}

/**
 * In a worker, as a flush request starts (inside the inspector's
 * interrupt): say so, and whether to serve it. False, and nothing said,
 * once the main thread has gated this worker's termination (see
 * {@link gateAndWaitOutsideSync}): the request came too late. Pair every
 * true with {@link leaveFlushRequest}.
 *
 * Why: on Node 20 and 24 a termination that lands while the worker runs
 * JavaScript inside the inspector's evaluation is lost (the evaluation
 * ends and the worker's own code goes on; reproduced without spanfuse in
 * bench/workers/lost-termination.ts: `Runtime.evaluate` through
 * `NodeWorker.sendMessageToWorker` while the main thread calls
 * `process.exit()`). A worker in a synchronous loop then never ends: the
 * process hangs in its exit, joining it, or `terminate()` never resolves.
 * So no termination may be started while a worker is inside a request.
 */
export function enterFlushRequest(): boolean {
  return enterUnless(INSIDE, GATED);
}

/** In a worker: the flush request {@link enterFlushRequest} let in is done. */
export function leaveFlushRequest(): void {
  if (!isMainThread) update(threadId, 0, INSIDE);
}

/**
 * In a worker: set `bit` in its own slot, unless the other side has set
 * `blocker` (then clear it again and return false). The other side sets
 * `blocker` before it reads `bit`, and this sets `bit` before it reads
 * `blocker` (all sequentially consistent): one of the two sees the other.
 * True on the main thread.
 */
function enterUnless(bit: number, blocker: number): boolean {
  if (isMainThread) return true;
  update(threadId, bit);
  if ((flags(threadId) & blocker) === 0) return true;
  update(threadId, 0, bit);
  return false;
}

/**
 * Main thread, before terminating worker `id` (or letting the process's
 * exit terminate it): no flush request starts there from now on, and this
 * waits, blocking, until the one it may be running is done or `deadline`
 * (a `performance.now()` time) passes. Returns 'outside' at once when none
 * was running, 'waited' when one finished meanwhile, 'inside' when one
 * still runs at the deadline. See {@link enterFlushRequest}.
 */
export function gateAndWaitOutsideSync(id: number, deadline: number): InsideWait {
  if (gate(id)) return 'outside';
  return waitForSync(id, deadline, outside) === undefined ? 'inside' : 'waited';
}

/** {@link gateAndWaitOutsideSync} without blocking: resolves after `timeoutMs` at most. */
export async function gateAndWhenOutside(id: number, timeoutMs: number): Promise<InsideWait> {
  if (gate(id)) return 'outside';
  return (await waitFor(id, timeoutMs, outside)) === undefined ? 'inside' : 'waited';
}

/** How a wait for a worker to leave its flush request ended (see {@link gateAndWaitOutsideSync}). */
export type InsideWait = 'outside' | 'waited' | 'inside';

const outside = (f: number): boolean => (f & INSIDE) === 0;

/** Gate worker `id` (see {@link enterFlushRequest}); true when no request runs there now. */
function gate(id: number): boolean {
  update(id, GATED);
  return outside(flags(id));
}

/** Main thread, before (re)sending a flush request: forget the previous answer. */
export function clearAnswer(id: number): void {
  update(id, 0, ANSWER);
}

/**
 * The creating thread: worker `id` was started with spanfuse's preload. Its
 * terminate() then waits for the preload to be loaded (see
 * {@link whenLoaded}).
 */
export function markPreloading(id: number): void {
  update(id, PRELOADING);
}

/** In a worker: the preload's modules are loaded (whatever start() then did). */
export function markPreloaded(): void {
  if (!isMainThread) update(threadId, PRELOADED);
}

/** Where worker `id` stands with the preload: not started with it, loading it, or done. */
export function preloadState(id: number): 'none' | 'loading' | 'loaded' {
  const f = flags(id);
  return (f & PRELOADED) !== 0 ? 'loaded' : (f & PRELOADING) !== 0 ? 'loading' : 'none';
}

/**
 * In a worker, before it loads one of spanfuse's stages with require(esm)
 * (core/require-esm.ts): say so, unless its termination has begun. False,
 * and nothing said, when it has: the load must not start then (see
 * {@link whenLoaded}). Pair every true with {@link endStageLoad}. True on
 * the main thread, and in a worker without the registry (created before
 * spanfuse was imported on the main thread: nothing to tell).
 */
export function beginStageLoad(): boolean {
  if (!isMainThread && shared() !== undefined && tids !== undefined) Atomics.store(tids, threadId % SLOTS, int32Tid());
  // The terminate hook sets TERMINATING before it reads STAGE_LOADING.
  return enterUnless(STAGE_LOADING, TERMINATING);
}

/** This thread's tid as the tid table holds it (0: unknown, no liveness check). */
function int32Tid(): number {
  const tid = procThreadSelfTid();
  return tid <= 0x7fffffff ? tid : 0;
}

/**
 * Whether the thread that set slot `i`'s STAGE_LOADING bit has ended: its
 * tid is known and no longer one of this process's tasks. A worker killed
 * in the middle of a load by a path that runs no terminate() hook (a nested
 * worker whose parent is terminated, a termination after the hook's bound)
 * never clears its bit.
 */
function loaderGone(i: number): boolean {
  const tid = tids === undefined ? 0 : Atomics.load(tids, i);
  if (tid <= 0) return false;
  try {
    return !fs.existsSync(`/proc/self/task/${tid}`);
  } catch {
    return false;
  }
}

/** In a worker: the stage load {@link beginStageLoad} let in is done (or failed). */
export function endStageLoad(): void {
  if (!isMainThread) update(threadId, 0, STAGE_LOADING);
}

/** Worker `id` is not loading spanfuse's preload or one of its stages. */
const loaded = (f: number): boolean => ((f & PRELOADING) === 0 || (f & PRELOADED) !== 0) && (f & STAGE_LOADING) === 0;

/**
 * Undefined when worker `id` is not in the middle of loading spanfuse's
 * preload (not started with it, or done) or one of its stages (see
 * {@link beginStageLoad}); else resolves when it is done, or after
 * `timeoutMs`.
 *
 * Why: on Node 20 a worker terminated while `require()` instantiates an ES
 * module graph (the preload is `--require`d, see inject.ts) aborts the whole
 * process (`v8::Module::IsGraphAsync must be used on an instantiated module`,
 * from ModuleWrap::InstantiateSync): terminate() must not land in that span.
 */
export function whenLoaded(id: number, timeoutMs: number): Promise<unknown> | undefined {
  if (loaded(flags(id))) return undefined;
  return waitFor(id, timeoutMs, loaded);
}

/**
 * Block this thread until each worker of `ids` that is loading spanfuse's
 * preload has loaded it, or until `deadline` (a `performance.now()` time).
 * Returns how many were still loading then. For the main thread's `exit`
 * listener, after which Node terminates every worker itself (on Node 20,
 * while one instantiates the preload's modules, aborting the process: see
 * {@link whenLoaded}); `Atomics.wait` is allowed on Node's main thread.
 */
export function waitPreloadedSync(ids: Iterable<number>, deadline: number): number {
  let loading = 0;
  for (const id of ids) {
    if (id > 0 && waitForSync(id, deadline, (f) => (f & PRELOADING) === 0 || (f & PRELOADED) !== 0) === undefined) loading++;
  }
  return loading;
}

/**
 * Block this thread until no worker loads one of spanfuse's stages (see
 * {@link beginStageLoad}), or until `deadline` (a `performance.now()` time).
 * Returns how many still did then. For the main thread's `exit` listener:
 * these workers may be ones spanfuse did not create (no preload: their own
 * code called start()), so the whole table is read, once (~16k loads).
 * A worker that died in the middle of a load (its bit never cleared) is not
 * waited for: see {@link loaderGone}.
 */
export function waitStageLoadsSync(deadline: number): number {
  const t = shared();
  if (t === undefined) return 0;
  let loading = 0;
  for (let i = 0; i < SLOTS; i++) {
    const v = Atomics.load(t, i);
    if ((v & STAGE_LOADING) === 0) continue;
    // The slot's tag is its thread id modulo 2^21: as good as the id here.
    const id = v >>> SHIFT;
    if (id > 0 && !stageLoadEndsSync(id, deadline)) loading++;
  }
  return loading;
}

/**
 * Block until worker `id` clears its STAGE_LOADING bit or its thread is
 * found gone (then clear the bit for it), or `deadline` passes (false). A
 * thread that dies does not notify, so the wait looks again every 50 ms.
 * `id` may be a slot's tag (the thread id modulo 2^21): SLOTS divides
 * 2^21, so it names the same slot.
 */
function stageLoadEndsSync(id: number, deadline: number): boolean {
  const f = waitForSync(id, deadline, (flags) => (flags & STAGE_LOADING) === 0 || loaderGone(id % SLOTS), 50);
  if (f === undefined) return false;
  if ((f & STAGE_LOADING) !== 0) update(id, 0, STAGE_LOADING);
  return true;
}

/**
 * A flush request is settled: answered, or the worker stopped answering
 * (ended on its own, or its spanfuse stopped: nothing left to write).
 */
const settled = (f: number): boolean => (f & FLUSHED) !== 0 || (f & PROFILED) === 0;

/**
 * Main thread: resolves with worker `id`'s answer ('empty' when it stopped
 * answering), or undefined after `timeoutMs`.
 */
export async function whenFlushed(id: number, timeoutMs: number): Promise<FlushAnswer | undefined> {
  const v = await waitFor(id, timeoutMs, settled);
  return v === undefined ? undefined : answerOf(v);
}

/**
 * Worker `id`'s answer to a flush request, waiting with Atomics.wait (this
 * thread blocks) until it comes or `deadline` (a `performance.now()` time)
 * passes: for the main thread's `exit` listener, where no event-loop turn
 * would deliver {@link whenFlushed}'s wake-up.
 */
export function waitFlushedSync(id: number, deadline: number): FlushAnswer | undefined {
  const f = waitForSync(id, deadline, settled);
  return f === undefined ? undefined : answerOf(f);
}

function answerOf(flags: number): FlushAnswer {
  return (flags & WROTE) !== 0 ? 'wrote' : (flags & BUSY) !== 0 ? 'busy' : 'empty';
}

/** Worker `id`'s flags once `done(flags)`, or undefined after `timeoutMs`. */
async function waitFor(id: number, timeoutMs: number, done: (flags: number) => boolean): Promise<number | undefined> {
  const t = shared();
  if (t === undefined || id <= 0) return undefined;
  const i = id % SLOTS;
  const tag = id & TAG_MASK;
  const until = performance.now() + timeoutMs;
  for (;;) {
    const v = Atomics.load(t, i);
    if (v >>> SHIFT === tag && done(v & MASK)) return v & MASK;
    const left = until - performance.now();
    if (left <= 0) return undefined;
    const r = (Atomics as unknown as AtomicsWaitAsync).waitAsync(t, i, v, left);
    if (!r.async) continue;
    // Atomics.waitAsync holds no event-loop handle: in a process with nothing
    // else to do, the loop would end with this wait pending, and with it the
    // app's `await worker.terminate()` (its code after it never ran).
    const keepAlive = setTimeout(() => undefined, left);
    try {
      await r.value;
    } finally {
      clearTimeout(keepAlive);
    }
  }
}

/**
 * {@link waitFor}, blocking this thread with Atomics.wait (allowed on Node's
 * main thread) until `done(flags)` or `deadline` (a `performance.now()` time).
 * `stepMs` bounds each wait, for a `done` that can turn true without a
 * notify.
 */
function waitForSync(id: number, deadline: number, done: (flags: number) => boolean, stepMs = Infinity): number | undefined {
  const t = shared();
  if (t === undefined || id <= 0) return undefined;
  const i = id % SLOTS;
  const tag = id & TAG_MASK;
  for (;;) {
    const v = Atomics.load(t, i);
    const f = v >>> SHIFT === tag ? v & MASK : 0;
    if (done(f)) return f;
    const left = deadline - performance.now();
    if (left <= 0) return undefined;
    Atomics.wait(t, i, v, Math.min(left, stepMs));
  }
}
