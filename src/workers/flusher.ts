import { Session } from 'node:inspector';
import { flushExpression } from './flush-target.js';
import type { FlushWhen } from './flush-target.js';
import { clearAnswer, gateAndWaitOutsideSync, gateAndWhenOutside, isGated, isProfiled, waitFlushedSync, whenFlushed } from './registry.js';
import type { FlushAnswer, InsideWait } from './registry.js';

/** Pause before asking a worker again that was closing a window (ms). */
const BUSY_RETRY_MS = 20;
/**
 * How long a worker's event loop gets to serve a flush on its next turn
 * before the request interrupts its JavaScript instead (ms).
 */
export const TURN_WAIT_MS = 100;

export interface FlushStats {
  /** Flush requests answered with a written window. */
  readonly flushed: number;
  /** Requests answered, but nothing to write (worker not profiled yet or already stopped). */
  readonly empty: number;
  /** Requests that got no answer within the bound (terminate went ahead). */
  readonly timedOut: number;
  /** Terminations with no session to ask (worker not attached yet, or no inspector). */
  readonly unreachable: number;
  /**
   * Requests that found the worker closing a window and were sent again
   * (each termination still ends in exactly one of the four counts above).
   */
  readonly retried: number;
  /**
   * Requests the worker's event loop did not serve within TURN_WAIT_MS (a
   * synchronous loop), sent again to be served inside the interrupt.
   */
  readonly interrupted: number;
  /**
   * Terminations (and exits) that waited, past the bound, for a worker to
   * finish the flush request it was running inside the interrupt (see
   * {@link INSIDE_WAIT_MS}). Its answer came after the bound, so it is
   * counted in `timedOut`, though the window it was writing got written.
   */
  readonly waitedInside: number;
  /** ... and went ahead with the request still running after INSIDE_WAIT_MS. */
  readonly leftInside: number;
}

/**
 * Longest wait, once a flush's bound has passed, for a worker still running
 * a flush request inside the interrupt (writing its window there) before its
 * termination proceeds (ms). Node (20 and 24) loses a termination that
 * lands while a worker runs the inspector's evaluation: a worker in a
 * synchronous loop then runs on forever, and the process hangs in its exit
 * (Node 24: 2 of 5 runs of 20 such workers on a loaded 2-core machine) or
 * `terminate()` never resolves.
 * The request ends on its own (it writes one window), so this wait is the
 * time that write takes on a starved machine; past it the termination goes
 * ahead, as before.
 */
export const INSIDE_WAIT_MS = 10_000;

/**
 * What follows a flush request's wait, for {@link WorkerFlusher.flush} and
 * the exit's blocking wait alike, with `msLeft` of the whole bound left: ask
 * again inside the interrupt ('now': the worker's loop took no turn in
 * time, so the window is written where the worker is), ask again after
 * BUSY_RETRY_MS ('busy': it was closing a window), or stop (undefined).
 */
function nextAsk(answer: FlushAnswer | undefined, when: FlushWhen, msLeft: number): 'now' | 'busy' | undefined {
  if (answer === undefined && when === 'turn' && msLeft > 0) return 'now';
  if (answer === 'busy' && msLeft > BUSY_RETRY_MS) return 'busy';
  return undefined;
}

/**
 * Least time the exit's wait gives the workers from when it starts (ms),
 * however much of the bound the main thread's own exit work (its last
 * window, held tail spans handed to the app's processors, file writes) used
 * up after they were asked. On a starved machine that work alone can outlast
 * the bound, and a wait that then asked nothing more lost the open window of
 * every worker in a synchronous loop: 20 of 20 timed out, none interrupted,
 * in one CI run (2026-12-06).
 */
export const EXIT_MIN_WAIT_MS = 1500;

/** A worker asked to flush at exit. */
interface Asked {
  readonly id: number;
  readonly sessionId: string;
  /** When it was asked (performance.now()). */
  readonly at: number;
}

/** Never notified: Atomics.wait on it is a blocking sleep. */
const SLEEP = new Int32Array(new SharedArrayBuffer(4));

/**
 * Main-thread side of flush-before-terminate: one inspector session with the
 * NodeWorker domain on, which attaches a child session to every worker as it
 * starts. `flush(threadId)` evaluates the worker's flush function there and
 * resolves when it answered, or after `timeoutMs`; it never rejects.
 */
export class WorkerFlusher {
  readonly #session: Session;
  /** worker threadId -> inspector session id */
  readonly #sessions = new Map<number, string>();
  #nextId = 1;
  #closed = false;
  /** Exit waits not finished yet: they still ask through the session. */
  #exitWaits = 0;
  /** close() was called while an exit wait was pending: done when it ends. */
  #closeWhenDone = false;
  #flushed = 0;
  #empty = 0;
  #timedOut = 0;
  #unreachable = 0;
  #retried = 0;
  #interrupted = 0;
  #waitedInside = 0;
  #leftInside = 0;

  private constructor(session: Session) {
    this.#session = session;
  }

  /** Undefined where the inspector is missing or refuses. */
  static start(): WorkerFlusher | undefined {
    try {
      const session = new Session();
      session.connect();
      const f = new WorkerFlusher(session);
      f.#listen();
      session.post('NodeWorker.enable', { waitForDebuggerOnStart: false }, () => undefined);
      return f;
    } catch {
      return undefined;
    }
  }

  #listen(): void {
    const s = this.#session as unknown as NodeJS.EventEmitter;
    s.on('NodeWorker.attachedToWorker', (m: { params?: { sessionId?: string; workerInfo?: { title?: string } } }) => {
      // The inspector's workerId is its own counter; the title starts with
      // `[worker <threadId>]` (Node 20 and 24). The worker checks the id too.
      const id = Number(/^\[worker (\d+)\]/.exec(m.params?.workerInfo?.title ?? '')?.[1]);
      const sid = m.params?.sessionId;
      if (Number.isSafeInteger(id) && typeof sid === 'string') this.#sessions.set(id, sid);
    });
    s.on('NodeWorker.detachedFromWorker', (m: { params?: { sessionId?: string } }) => {
      const sid = m.params?.sessionId;
      for (const [id, v] of this.#sessions) if (v === sid) this.#sessions.delete(id);
    });
  }

  /**
   * Ask worker `threadId` to write its open window; resolves once it
   * answered (true when it wrote a window) or after `timeoutMs`. The worker
   * first gets TURN_WAIT_MS to do it on its own event loop; a worker whose
   * loop took no turn by then is asked to do it inside the interrupt. A
   * worker that was busy with its own window work when asked is asked again,
   * within the same bound. For its caller, which terminates the worker next,
   * it then closes the worker to further requests and waits until none runs
   * there (at most {@link INSIDE_WAIT_MS}). Never rejects.
   */
  async flush(threadId: number, timeoutMs: number): Promise<boolean> {
    const wrote = await this.#askUntilAnswered(threadId, timeoutMs);
    // The caller terminates next: not while a request runs in the worker.
    let where: InsideWait = 'outside';
    try {
      where = await gateAndWhenOutside(threadId, INSIDE_WAIT_MS);
    } catch {
      // Atomics.waitAsync failed: flush() never rejects (the answer's wait neither)
    }
    this.#countInside(where);
    return wrote;
  }

  #countInside(where: InsideWait): void {
    if (where === 'waited') this.#waitedInside++;
    else if (where === 'inside') {
      this.#waitedInside++;
      this.#leftInside++;
    }
  }

  async #askUntilAnswered(threadId: number, timeoutMs: number): Promise<boolean> {
    const until = performance.now() + timeoutMs;
    let when: FlushWhen = 'turn';
    for (;;) {
      const sessionId = this.#sessions.get(threadId);
      if (this.#closed || sessionId === undefined || !this.#ask(sessionId, threadId, when)) {
        this.#unreachable++;
        return false;
      }
      const bound = when === 'turn' ? Math.min(until, performance.now() + TURN_WAIT_MS) : until;
      let answer: FlushAnswer | undefined;
      try {
        answer = await whenFlushed(threadId, bound - performance.now());
      } catch {
        answer = undefined;
      }
      const again = nextAsk(answer, when, until - performance.now());
      if (again === undefined) {
        this.#count(answer);
        return answer === 'wrote';
      }
      if (again === 'now') {
        when = 'now';
        this.#interrupted++;
      } else {
        this.#retried++;
        await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS));
      }
    }
  }

  #count(answer: FlushAnswer | undefined): void {
    if (answer === 'wrote') this.#flushed++;
    else if (answer === 'empty') this.#empty++;
    else this.#timedOut++;
  }

  /**
   * The process is exiting: Node terminates every worker right after the
   * main thread's `exit` listeners, and a profiled worker's open window dies
   * with it. Ask every attached profiled worker to write it now (all at
   * once: they write in parallel), and return the wait. The wait blocks this
   * thread (Atomics.wait on the shared table: no event-loop turn comes in an
   * `exit` listener) until each worker answered, or until `timeoutMs` after
   * the asking, in all, but at least `minWaitMs` from the wait's own start
   * ({@link EXIT_MIN_WAIT_MS}); it returns how many wrote a window. Same protocol as
   * {@link flush}: on the worker's next turn first, inside the interrupt
   * after TURN_WAIT_MS, asked again when busy.
   */
  flushAllForExit(timeoutMs: number, minWaitMs = EXIT_MIN_WAIT_MS): () => number {
    const askedUntil = performance.now() + timeoutMs;
    const asked: Asked[] = [];
    // Workers whose terminate() has gated them: that flush is over and they
    // serve no request now; asked anyway, the exit waited its whole bound
    // for answers that never come. Still waited for below while one writes.
    const gated: number[] = [];
    if (!this.#closed) {
      for (const [id, sessionId] of this.#sessions) {
        if (!isProfiled(id)) continue;
        if (isGated(id)) gated.push(id);
        else if (this.#ask(sessionId, id, 'turn')) asked.push({ id, sessionId, at: performance.now() });
      }
    }
    this.#exitWaits++;
    let done = false;
    return () => {
      let wrote = 0;
      const until = Math.max(askedUntil, performance.now() + Math.min(minWaitMs, timeoutMs));
      try {
        // Every worker whose loop gave no turn in time is asked to write at
        // once before any of those answers is waited for: they write in
        // parallel. (One after the other, 20 workers in synchronous loops on
        // 2 cores got 8-12 windows written within the bound.)
        const pending: [Asked, FlushWhen][] = [];
        for (const a of asked) {
          const answered = waitFlushedSync(a.id, Math.min(until, a.at + TURN_WAIT_MS)) !== undefined;
          if (answered || until - performance.now() <= 0) pending.push([a, 'turn']);
          else if (this.#ask(a.sessionId, a.id, 'now')) {
            this.#interrupted++;
            pending.push([{ ...a, at: performance.now() }, 'now']);
          } else this.#unreachable++;
        }
        for (const [a, when] of pending) if (this.#waitSync(a, until, when)) wrote++;
        // Node terminates every worker once this returns: not while one
        // still writes inside the interrupt (see INSIDE_WAIT_MS).
        const insideUntil = performance.now() + INSIDE_WAIT_MS;
        for (const id of [...asked.map((a) => a.id), ...gated]) this.#countInside(gateAndWaitOutsideSync(id, insideUntil));
      } finally {
        if (!done) {
          done = true;
          this.#exitWaits--;
          if (this.#closeWhenDone && this.#exitWaits === 0) this.close();
        }
      }
      return wrote;
    };
  }

  /**
   * {@link flush}'s loop for one worker, blocking, from its last request
   * (`when`, sent at `a.at`), whose answer may be in already.
   */
  #waitSync(a: Asked, until: number, sent: FlushWhen): boolean {
    let when = sent;
    let at = a.at;
    for (;;) {
      const bound = when === 'turn' ? Math.min(until, at + TURN_WAIT_MS) : until;
      const answer = waitFlushedSync(a.id, bound);
      const again = nextAsk(answer, when, until - performance.now());
      if (again === undefined) {
        this.#count(answer);
        return answer === 'wrote';
      }
      if (again === 'now') {
        when = 'now';
        this.#interrupted++;
      } else {
        this.#retried++;
        Atomics.wait(SLEEP, 0, 0, BUSY_RETRY_MS);
      }
      if (!this.#ask(a.sessionId, a.id, when)) {
        this.#unreachable++;
        return false;
      }
      at = performance.now();
    }
  }

  /** Send one flush request; false when the session refuses it. */
  #ask(sessionId: string, threadId: number, when: FlushWhen): boolean {
    const id = this.#nextId++;
    try {
      clearAnswer(threadId);
      // The answer comes through the shared registry (no reply parsing).
      const message = JSON.stringify({ id, method: 'Runtime.evaluate', params: { expression: flushExpression(threadId, when), returnByValue: true } });
      this.#session.post('NodeWorker.sendMessageToWorker', { sessionId, message }, () => undefined);
      return true;
    } catch {
      return false;
    }
  }

  /** Whether the inspector has attached to worker `threadId` (a flush can reach it). */
  reachable(threadId: number): boolean {
    return !this.#closed && this.#sessions.has(threadId);
  }

  stats(): FlushStats {
    return {
      flushed: this.#flushed,
      empty: this.#empty,
      timedOut: this.#timedOut,
      unreachable: this.#unreachable,
      retried: this.#retried,
      interrupted: this.#interrupted,
      waitedInside: this.#waitedInside,
      leftInside: this.#leftInside,
    };
  }

  /**
   * Idempotent: detaches from every worker. During an exit wait (see
   * {@link flushAllForExit}) it takes effect when the wait ends: the wait
   * asks again through the session (a worker whose loop gave no turn is
   * asked to write at once), and the profiler's exit path stops its worker
   * support before it waits. Closed early, that second request failed and
   * the worker was left to Node's termination with its window unwritten.
   */
  close(): void {
    if (this.#closed) return;
    if (this.#exitWaits > 0) {
      this.#closeWhenDone = true;
      return;
    }
    this.#closed = true;
    try {
      this.#session.disconnect();
    } catch {
      // already gone
    }
    this.#sessions.clear();
  }
}
