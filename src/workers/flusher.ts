import { Session } from 'node:inspector';
import { flushExpression } from './flush-target.js';
import { whenFlushed } from './registry.js';

export interface FlushStats {
  /** Flush requests answered with a written window. */
  readonly flushed: number;
  /** Requests answered, but nothing to write (worker not profiled yet or already stopped). */
  readonly empty: number;
  /** Requests that got no answer within the bound (terminate went ahead). */
  readonly timedOut: number;
  /** Terminations with no session to ask (worker not attached yet, or no inspector). */
  readonly unreachable: number;
}

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
  #flushed = 0;
  #empty = 0;
  #timedOut = 0;
  #unreachable = 0;

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
   * answered (true when it wrote a window) or after `timeoutMs`. Never rejects.
   */
  async flush(threadId: number, timeoutMs: number): Promise<boolean> {
    const sessionId = this.#sessions.get(threadId);
    if (this.#closed || sessionId === undefined) {
      this.#unreachable++;
      return false;
    }
    const id = this.#nextId++;
    try {
      // The answer comes through the shared registry (no reply parsing).
      const message = JSON.stringify({ id, method: 'Runtime.evaluate', params: { expression: flushExpression(threadId), returnByValue: true } });
      this.#session.post('NodeWorker.sendMessageToWorker', { sessionId, message }, () => undefined);
    } catch {
      this.#unreachable++;
      return false;
    }
    let answered: boolean | undefined;
    try {
      answered = await whenFlushed(threadId, timeoutMs);
    } catch {
      answered = undefined;
    }
    if (answered === true) this.#flushed++;
    else if (answered === false) this.#empty++;
    else this.#timedOut++;
    return answered === true;
  }

  stats(): FlushStats {
    return { flushed: this.#flushed, empty: this.#empty, timedOut: this.#timedOut, unreachable: this.#unreachable };
  }

  /** Idempotent: detaches from every worker. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#session.disconnect();
    } catch {
      // already gone
    }
    this.#sessions.clear();
  }
}
