import { isMainThread, threadId } from 'node:worker_threads';
import { currentTid } from './thread-id.js';
import { probeThreadpool } from './threadpool.js';
import { fs } from '../core/builtins.js';
import { readComm } from './comm.js';

const { readdirSync, writeFileSync, stat } = fs;

/**
 * Thread identity and inventory. Linux names every Node.js thread after the
 * process (`node`), so names are made meaningful here:
 * - the main thread is the one whose tid is the pid;
 * - a worker thread renames its own `comm` to `w<threadId>:<name>` when it
 *   first asks for its identity (visible to `top -H` and eBPF profilers);
 * - libuv threadpool threads are named `libuv-worker`: by creating the pool
 *   while the main thread's `comm` briefly says so (new threads inherit the
 *   creator's `comm`) when it does not exist yet (CommonJS preload), else by
 *   catching each pool thread blocked on a FIFO (see threadpool.ts);
 * - the other threads present at startup (Node's V8 platform threads and its
 *   signal watcher) are classified `v8`.
 */
export type ThreadKind = 'main' | 'worker' | 'libuv-threadpool' | 'v8' | 'other';

export interface ThreadIdentity {
  readonly tid: number;
  readonly name: string;
}

export interface ThreadInfo extends ThreadIdentity {
  readonly kind: ThreadKind;
  /** The kernel's thread name (`/proc/.../comm`), at most 15 bytes. */
  readonly comm: string;
  /** Worker `threadId`, for worker threads. */
  readonly workerThreadId?: number;
}

export const THREADPOOL_COMM = 'libuv-worker';
const WORKER_COMM = /^w(\d+):(.*)$/;
const COMM_MAX_BYTES = 15;
/** Names Node 24+ gives V8's platform threads (the delayed-task one is cut to 15 bytes). */
const V8_COMMS = new Set(['V8Worker', 'DelayedTaskSche']);

/**
 * Identity of the calling thread, for the sampler's `thread.id`/`thread.name`
 * labels; call once per thread. In a worker, pass the worker's `name` (Node
 * does not expose it inside the worker); the thread's `comm` is set to
 * `w<threadId>:<name>` so other threads and external profilers see it too.
 */
export function currentThreadIdentity(
  options: { name?: string; procRoot?: string; rename?: boolean } = {},
): ThreadIdentity {
  const tid = currentTid();
  if (isMainThread) return { tid, name: 'main' };
  const name = options.name !== undefined && options.name !== '' ? options.name : `worker-${threadId}`;
  if (options.rename !== false) {
    writeComm(`${options.procRoot ?? '/proc'}/thread-self/comm`, truncateComm(`w${threadId}:${options.name ?? ''}`));
  }
  return { tid, name };
}

function truncateComm(s: string): string {
  const buf = Buffer.from(s, 'utf8');
  if (buf.length <= COMM_MAX_BYTES) return s;
  // Cut on a character boundary.
  return new TextDecoder().decode(buf.subarray(0, COMM_MAX_BYTES)).replace(/\uFFFD+$/, '');
}

function writeComm(path: string, comm: string): boolean {
  try {
    writeFileSync(path, comm);
    return true;
  } catch {
    return false;
  }
}

function taskIds(procSelf: string): number[] {
  try {
    return readdirSync(`${procSelf}/task`)
      .map(Number)
      .filter((n) => Number.isSafeInteger(n) && n > 0);
  } catch {
    return [];
  }
}

export interface ThreadpoolNaming {
  readonly named: boolean;
  /** Thread ids of the pool, when it was created here. */
  readonly tids: readonly number[];
  readonly reason?: string;
}

/**
 * Knows which threads are which for one process. `captureStartup()` should run
 * on the main thread before the application does I/O (the preload), so the
 * threadpool does not exist yet; later it still works but can only classify
 * threads by name.
 */
export class ThreadInventory {
  readonly #procSelf: string;
  readonly #pid = process.pid;
  readonly #startup = new Set<number>();
  #pool: ThreadpoolNaming | undefined;

  constructor(procSelf = '/proc/self') {
    this.#procSelf = procSelf;
  }

  get threadpool(): ThreadpoolNaming | undefined {
    return this.#pool;
  }

  /**
   * Record the threads Node started before user code and create the libuv
   * threadpool under the name `libuv-worker`. Main thread only; idempotent.
   */
  captureStartup(options: { rename?: boolean } = {}): ThreadpoolNaming {
    if (this.#pool) return this.#pool;
    if (!isMainThread) return (this.#pool = { named: false, tids: [], reason: 'not on the main thread' });
    const before = new Set(taskIds(this.#procSelf));
    if (before.size === 0) return (this.#pool = { named: false, tids: [], reason: 'no /proc task list' });
    if (options.rename === false) {
      for (const t of before) if (t !== this.#pid) this.#startup.add(t);
      return (this.#pool = { named: false, tids: [], reason: 'thread naming disabled by configuration' });
    }
    const selfComm = `${this.#procSelf}/task/${this.#pid}/comm`;
    const original = readComm(selfComm);
    let renamed = false;
    if (original !== undefined && original !== THREADPOOL_COMM) renamed = writeComm(selfComm, THREADPOOL_COMM);
    try {
      // The first threadpool request creates every pool thread synchronously,
      // inside this call, as children of this thread.
      stat(this.#procSelf, () => undefined);
    } finally {
      if (renamed && original !== undefined) writeComm(selfComm, original);
    }
    for (const t of before) if (t !== this.#pid) this.#startup.add(t);
    const created = taskIds(this.#procSelf).filter((t) => !before.has(t));
    const poolTids = created.filter((t) => readComm(`${this.#procSelf}/task/${t}/comm`) === THREADPOOL_COMM);
    if (poolTids.length === 0) {
      this.#pool = { named: false, tids: [], reason: 'the libuv threadpool already existed; its threads stay unnamed' };
      return this.#pool;
    }
    this.#pool = { named: true, tids: poolTids };
    return this.#pool;
  }

  /**
   * `captureStartup()`, and when the pool already existed, find and name its
   * threads with {@link probeThreadpool} (needs koffi for mkfifo).
   */
  async nameThreadpool(poolSize: number): Promise<ThreadpoolNaming> {
    const first = this.captureStartup();
    if (first.named || !isMainThread) return first;
    const probe = await probeThreadpool(poolSize, THREADPOOL_COMM, this.#procSelf);
    for (const t of probe.tids) this.#startup.delete(t);
    this.#pool = { named: probe.tids.length > 0, tids: probe.tids, ...(probe.reason !== undefined ? { reason: probe.reason } : {}) };
    return this.#pool;
  }

  /** Every thread of this process, classified and named. */
  list(): ThreadInfo[] {
    const out: ThreadInfo[] = [];
    const seenWorker = new Set<number>();
    for (const tid of taskIds(this.#procSelf).sort((a, b) => a - b)) {
      const comm = readComm(`${this.#procSelf}/task/${tid}/comm`);
      if (comm === undefined) continue; // exited meanwhile
      out.push(this.#classify(tid, comm, seenWorker));
    }
    return out;
  }

  #classify(tid: number, comm: string, seenWorker: Set<number>): ThreadInfo {
    if (tid === this.#pid) return { tid, name: 'main', kind: 'main', comm };
    const w = WORKER_COMM.exec(comm);
    if (w) {
      const id = Number(w[1]);
      // A thread a worker creates inherits its comm; the worker itself is the
      // oldest (lowest tid) thread carrying it.
      if (!seenWorker.has(id)) {
        seenWorker.add(id);
        const given = w[2] ?? '';
        return { tid, name: given === '' ? `worker-${id}` : given, kind: 'worker', comm, workerThreadId: id };
      }
      return { tid, name: `thread-${tid}`, kind: 'other', comm };
    }
    if (comm === THREADPOOL_COMM) return { tid, name: `libuv-worker-${tid}`, kind: 'libuv-threadpool', comm };
    // Node 24+ names its platform threads itself.
    if (V8_COMMS.has(comm)) return { tid, name: `${comm}-${tid}`, kind: 'v8', comm };
    if (this.#startup.has(tid)) return { tid, name: `v8-platform-${tid}`, kind: 'v8', comm };
    return { tid, name: `${comm}-${tid}`, kind: 'other', comm };
  }
}

/** One-shot inventory without startup knowledge (V8 threads show as `other`). */
export function listThreads(procSelf = '/proc/self'): ThreadInfo[] {
  return new ThreadInventory(procSelf).list();
}
