import { Session } from 'node:inspector';
import { flushExpression } from './flush-target.js';

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

interface Pending {
  readonly sessionId: string;
  readonly resolve: (ok: boolean | undefined) => void;
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
  readonly #pending = new Map<number, Pending>();
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
      for (const p of this.#pending.values()) if (p.sessionId === sid) p.resolve(undefined);
    });
    s.on('NodeWorker.receivedMessageFromWorker', (m: { params?: { message?: string } }) => {
      try {
        const msg = JSON.parse(m.params?.message ?? '{}') as { id?: number; result?: { result?: { value?: unknown } } };
        if (typeof msg.id !== 'number') return;
        this.#pending.get(msg.id)?.resolve(msg.result?.result?.value === true);
      } catch {
        // not ours
      }
    });
  }

  /** Ask worker `threadId` to write its open window; bounded, never rejects. */
  flush(threadId: number, timeoutMs: number): Promise<boolean> {
    const sessionId = this.#sessions.get(threadId);
    if (this.#closed || sessionId === undefined) {
      this.#unreachable++;
      return Promise.resolve(false);
    }
    const id = this.#nextId++;
    return new Promise<boolean>((resolve) => {
      const done = (ok: boolean | undefined): void => {
        if (!this.#pending.delete(id)) return;
        clearTimeout(timer);
        if (ok === true) this.#flushed++;
        else if (ok === false) this.#empty++;
        else this.#timedOut++;
        resolve(ok === true);
      };
      const timer = setTimeout(() => done(undefined), timeoutMs);
      timer.unref();
      this.#pending.set(id, { sessionId, resolve: done });
      try {
        const message = JSON.stringify({ id, method: 'Runtime.evaluate', params: { expression: flushExpression(threadId), returnByValue: true } });
        this.#session.post('NodeWorker.sendMessageToWorker', { sessionId, message }, (err) => {
          if (err) done(undefined);
        });
      } catch {
        done(undefined);
      }
    });
  }

  stats(): FlushStats {
    return { flushed: this.#flushed, empty: this.#empty, timedOut: this.#timedOut, unreachable: this.#unreachable };
  }

  /** Idempotent: detaches from every worker. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const p of [...this.#pending.values()]) p.resolve(undefined);
    try {
      this.#session.disconnect();
    } catch {
      // already gone
    }
    this.#sessions.clear();
  }
}
