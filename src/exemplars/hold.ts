import { performance } from 'node:perf_hooks';

/** An entry waiting in the hold. */
export interface HoldEntry {
  /** Profile window whose close releases it. */
  readonly profileId: string;
  /** `performance.now()` ms after which it is released anyway. */
  readonly deadline: number;
}

/**
 * Bounded waiting room for tail spans: at most `capacity` entries, each for
 * at most `maxDelayMs`. One unref'd timer is armed for the oldest deadline
 * (entries arrive in deadline order because the delay is constant).
 */
export class Hold<E extends HoldEntry> {
  readonly capacity: number;
  readonly maxDelayMs: number;
  readonly #entries = new Set<E>();
  readonly #byWindow = new Map<string, E[]>();
  readonly #onExpire: (entries: E[]) => void;
  readonly #maxPerExpire: number;
  #timer: NodeJS.Timeout | undefined;

  /**
   * `maxPerExpire`: most entries handed to `onExpire` per timer turn; the
   * rest of a burst of expired entries follows on later turns, so releasing
   * many at once never holds the event loop for long.
   */
  constructor(capacity: number, maxDelayMs: number, onExpire: (entries: E[]) => void, maxPerExpire = Infinity) {
    this.capacity = capacity;
    this.maxDelayMs = maxDelayMs;
    this.#onExpire = onExpire;
    this.#maxPerExpire = Math.max(1, maxPerExpire);
  }

  get size(): number {
    return this.#entries.size;
  }

  hasRoom(): boolean {
    return this.#entries.size < this.capacity;
  }

  deadlineFromNow(): number {
    return performance.now() + this.maxDelayMs;
  }

  add(entry: E): void {
    this.#entries.add(entry);
    const list = this.#byWindow.get(entry.profileId);
    if (list === undefined) this.#byWindow.set(entry.profileId, [entry]);
    else list.push(entry);
    this.#arm();
  }

  /** Remove and return the entries waiting for `profileId`. */
  takeWindow(profileId: string): E[] {
    const list = this.#byWindow.get(profileId);
    if (list === undefined) return [];
    this.#byWindow.delete(profileId);
    const out: E[] = [];
    for (const e of list) if (this.#entries.delete(e)) out.push(e);
    return out;
  }

  /** Remove and return entries waiting for any window but `keep`. */
  takeAllBut(keep: ReadonlySet<string>): E[] {
    const out: E[] = [];
    for (const id of [...this.#byWindow.keys()]) if (!keep.has(id)) out.push(...this.takeWindow(id));
    return out;
  }

  /** Remove and return everything; stop the timer. */
  takeAll(): E[] {
    const out = [...this.#entries];
    this.#entries.clear();
    this.#byWindow.clear();
    this.#disarm();
    return out;
  }

  /** Profile ids that still have entries waiting. */
  pendingProfileIds(): string[] {
    return [...this.#byWindow.keys()];
  }

  #arm(): void {
    if (this.#timer !== undefined) return;
    const first = this.#entries.values().next();
    if (first.done === true) return;
    const delay = Math.max(0, Math.ceil(first.value.deadline - performance.now()));
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#expire();
    }, delay);
    this.#timer.unref();
  }

  #disarm(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #expire(): void {
    const now = performance.now();
    const expired: E[] = [];
    for (const e of this.#entries) {
      if (e.deadline > now || expired.length >= this.#maxPerExpire) break;
      expired.push(e);
    }
    const touched = new Set<string>();
    for (const e of expired) {
      this.#entries.delete(e);
      touched.add(e.profileId);
    }
    for (const id of touched) {
      const left = this.#byWindow.get(id)?.filter((e) => this.#entries.has(e)) ?? [];
      if (left.length === 0) this.#byWindow.delete(id);
      else this.#byWindow.set(id, left);
    }
    this.#arm();
    if (expired.length > 0) this.#onExpire(expired);
  }
}
