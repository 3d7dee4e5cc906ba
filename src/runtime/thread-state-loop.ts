import { closeSync, openSync, readFileSync, readSync, readdirSync } from 'node:fs';
import type { StateViews } from './state-table.js';
import {
  F_FUTEX,
  F_OFFCPU,
  F_ONCPU,
  F_RUNQUEUE,
  H_TICKS,
  MAX_SLOTS,
  REASONS_PER_SLOT,
  REASON_OVERFLOW,
  internWchan,
  reasonKeyOf,
  valueIndex,
} from './state-table.js';

/**
 * One sampling pass over every thread of the process, run by the sampler
 * worker. Each thread's `/proc/self/task/<tid>/syscall` is read for its first
 * 4 bytes only: enough for "runn(ing)" or a syscall number (at most 3 digits
 * on x86_64 and arm64), never the arguments, stack pointer or program counter
 * that follow. A thread that is not running is off-CPU for the time since the
 * previous pass, attributed to (syscall number, wchan).
 */
interface Tracked {
  readonly tid: number;
  readonly slot: number;
  syscallFd: number;
  wchanFd: number;
  schedFd: number;
  lastNr: number;
  lastWchanId: number;
}

export interface LoopOptions {
  readonly procSelf: string;
  readonly pid: number;
  /** The sampler's own thread, excluded. */
  readonly selfTid: number;
  readonly futexNrs: readonly number[];
  /** Re-list threads every this many passes. */
  readonly refreshEvery: number;
  /** Re-read a thread's wchan at least every this many passes. */
  readonly wchanEvery: number;
}

const SYSCALL_BYTES = 4;
const RUNNING = 0x72; // 'r' of "running"

export class ThreadStateLoop {
  readonly #v: StateViews;
  readonly #o: LoopOptions;
  readonly #threads = new Map<number, Tracked>();
  readonly #wchanIds = new Map<string, number>();
  readonly #sys = Buffer.alloc(SYSCALL_BYTES);
  readonly #text = Buffer.alloc(64);
  #passes = 0;
  #lastNs = 0n;
  /** Errors reading /proc, for stats. */
  errors = 0;

  constructor(views: StateViews, options: LoopOptions) {
    this.#v = views;
    this.#o = options;
  }

  get trackedThreads(): number {
    return this.#threads.size;
  }

  pass(): void {
    const now = process.hrtime.bigint();
    const elapsedNs = this.#lastNs === 0n ? 0 : Number(now - this.#lastNs);
    this.#lastNs = now;
    if (this.#passes % this.#o.refreshEvery === 0) this.#refresh();
    const checkWchan = this.#passes % this.#o.wchanEvery === 0;
    this.#passes++;
    for (const t of this.#threads.values()) {
      if (t.schedFd >= 0) this.#readSchedstat(t);
      if (elapsedNs === 0) continue;
      const nr = this.#readSyscallNr(t);
      if (nr === undefined || nr === RUNNING_NR) continue;
      if (nr !== t.lastNr || checkWchan) {
        t.lastNr = nr;
        t.lastWchanId = this.#readWchan(t);
      }
      this.#account(t, nr, elapsedNs);
    }
    Atomics.add(this.#v.header, H_TICKS, 1);
  }

  close(): void {
    for (const t of this.#threads.values()) this.#closeFds(t);
    this.#threads.clear();
  }

  #account(t: Tracked, nr: number, ns: number): void {
    const v = this.#v;
    v.values[valueIndex(t.slot, F_OFFCPU)] = (v.values[valueIndex(t.slot, F_OFFCPU)] ?? 0) + ns;
    if (this.#o.futexNrs.includes(nr)) {
      v.values[valueIndex(t.slot, F_FUTEX)] = (v.values[valueIndex(t.slot, F_FUTEX)] ?? 0) + ns;
    }
    const key = reasonKeyOf(nr, t.lastWchanId);
    const base = t.slot * REASONS_PER_SLOT;
    let i = 0;
    for (; i < REASONS_PER_SLOT - 1; i++) {
      const k = v.reasonKey[base + i];
      if (k === key) break;
      if (k === 0) {
        Atomics.store(v.reasonKey, base + i, key);
        break;
      }
    }
    if (i === REASONS_PER_SLOT - 1) Atomics.store(v.reasonKey, base + i, REASON_OVERFLOW);
    v.reasonNs[base + i] = (v.reasonNs[base + i] ?? 0) + ns;
  }

  #readSyscallNr(t: Tracked): number | undefined {
    let n: number;
    try {
      n = readSync(t.syscallFd, this.#sys, 0, SYSCALL_BYTES, 0);
    } catch {
      this.#drop(t);
      return undefined;
    }
    const b = this.#sys;
    if (n === 0) return undefined;
    let nr: number;
    if (b[0] === RUNNING) nr = RUNNING_NR;
    else {
      // "-1 0" (blocked outside a syscall) or "<nr> ..."
      let neg = false;
      let i = 0;
      if (b[0] === 0x2d) {
        neg = true;
        i = 1;
      }
      let x = 0;
      for (; i < n; i++) {
        const c = b[i] ?? 0;
        if (c < 0x30 || c > 0x39) break;
        x = x * 10 + (c - 0x30);
      }
      nr = neg ? -x : x;
    }
    b.fill(0);
    return nr;
  }

  #readWchan(t: Tracked): number {
    try {
      const n = readSync(t.wchanFd, this.#text, 0, this.#text.length, 0);
      const name = this.#text.toString('latin1', 0, n);
      return name === '' || name === '0' ? 0 : internWchan(this.#v, this.#wchanIds, name);
    } catch {
      return 0;
    }
  }

  #readSchedstat(t: Tracked): void {
    try {
      const n = readSync(t.schedFd, this.#text, 0, this.#text.length, 0);
      const s = this.#text.toString('latin1', 0, n);
      const sp1 = s.indexOf(' ');
      const sp2 = s.indexOf(' ', sp1 + 1);
      const oncpu = Number(s.slice(0, sp1));
      const runq = Number(s.slice(sp1 + 1, sp2));
      if (Number.isFinite(oncpu)) this.#v.values[valueIndex(t.slot, F_ONCPU)] = oncpu;
      if (Number.isFinite(runq)) this.#v.values[valueIndex(t.slot, F_RUNQUEUE)] = runq;
    } catch {
      t.schedFd = closeFd(t.schedFd);
    }
  }

  #refresh(): void {
    let names: string[];
    try {
      names = readdirSync(`${this.#o.procSelf}/task`);
    } catch {
      this.errors++;
      return;
    }
    const live = new Set<number>();
    for (const name of names) {
      const tid = Number(name);
      if (!Number.isSafeInteger(tid) || tid === this.#o.selfTid) continue;
      live.add(tid);
      const known = this.#threads.get(tid);
      if (known) {
        if (known.schedFd < 0 && this.#isJsThread(tid)) known.schedFd = this.#open(tid, 'schedstat');
        continue;
      }
      this.#track(tid);
    }
    for (const t of this.#threads.values()) if (!live.has(t.tid)) this.#drop(t);
  }

  #isJsThread(tid: number): boolean {
    if (tid === this.#o.pid) return true;
    try {
      return /^w\d+:/.test(readFileSync(`${this.#o.procSelf}/task/${tid}/comm`, 'latin1'));
    } catch {
      return false;
    }
  }

  #track(tid: number): void {
    const slot = this.#claimSlot(tid);
    if (slot < 0) return;
    const syscallFd = this.#open(tid, 'syscall');
    if (syscallFd < 0) {
      this.#releaseSlot(slot);
      return;
    }
    const t: Tracked = {
      tid,
      slot,
      syscallFd,
      wchanFd: this.#open(tid, 'wchan'),
      schedFd: this.#isJsThread(tid) ? this.#open(tid, 'schedstat') : -1,
      lastNr: Number.NaN,
      lastWchanId: 0,
    };
    this.#threads.set(tid, t);
  }

  #open(tid: number, file: string): number {
    try {
      return openSync(`${this.#o.procSelf}/task/${tid}/${file}`, 'r');
    } catch {
      this.errors++;
      return -1;
    }
  }

  #claimSlot(tid: number): number {
    const v = this.#v;
    for (let i = 0; i < MAX_SLOTS; i++) {
      if (Atomics.load(v.slotTid, i) !== 0) continue;
      // Zero the slot before it becomes visible under the new tid.
      v.values.fill(0, valueIndex(i, 0), valueIndex(i + 1, 0));
      v.reasonKey.fill(0, i * REASONS_PER_SLOT, (i + 1) * REASONS_PER_SLOT);
      v.reasonNs.fill(0, i * REASONS_PER_SLOT, (i + 1) * REASONS_PER_SLOT);
      Atomics.store(v.slotTid, i, tid);
      return i;
    }
    return -1;
  }

  #releaseSlot(slot: number): void {
    Atomics.store(this.#v.slotTid, slot, 0);
  }

  #drop(t: Tracked): void {
    this.#closeFds(t);
    this.#threads.delete(t.tid);
    this.#releaseSlot(t.slot);
  }

  #closeFds(t: Tracked): void {
    t.syscallFd = closeFd(t.syscallFd);
    t.wchanFd = closeFd(t.wchanFd);
    t.schedFd = closeFd(t.schedFd);
  }
}

const RUNNING_NR = -1000;

function closeFd(fd: number): number {
  if (fd >= 0) {
    try {
      closeSync(fd);
    } catch {
      // already gone
    }
  }
  return -1;
}
