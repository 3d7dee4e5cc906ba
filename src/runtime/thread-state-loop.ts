import type { StateViews } from './state-table.js';
import {
  F_FUTEX,
  F_OFFCPU,
  F_ONCPU,
  F_FAULTS,
  F_IVCSW,
  F_RUNQUEUE,
  F_VCSW,
  H_ERRORS,
  H_TICKS,
  MAX_SLOTS,
  NR_NOT_IN_SYSCALL,
  NR_NOT_SCHEDULED,
  NR_SHORT_WAITS,
  NR_UNOBSERVED,
  REASONS_PER_SLOT,
  REASON_OVERFLOW,
  internWchan,
  reasonKeyOf,
  valueIndex,
} from './state-table.js';
import { fs } from '../core/builtins.js';
import { closeFd, readComm } from './comm.js';

const { openSync, readSync, readdirSync } = fs;

/**
 * One sampling pass over the threads of the process, run by the sampler
 * worker.
 *
 * How much time a thread spent off-CPU between two passes is measured, not
 * sampled: wall time minus the growth of its on-CPU and run-queue times from
 * `/proc/self/task/<tid>/schedstat`. Only *why* is sampled: the syscall the
 * thread is blocked in, from the first 4 bytes of `/proc/.../syscall` (enough
 * for "runn(ing)" or a syscall number of at most 3 digits on x86_64 and
 * arm64; the arguments, stack pointer and program counter that follow are
 * never read), plus the kernel wait function from `wchan`.
 *
 * A thread that was waiting at the previous pass and has not been scheduled
 * since (schedstat's timeslice count unchanged) is still in the same wait, so
 * nothing else is re-read for it: idle threads cost one small read per pass.
 * A threadpool thread found so {@link IDLE_AFTER} visits in a row is then
 * visited only every `idleEvery` passes (LoopOptions), until it is seen
 * scheduled again; its off-CPU time is still accounted in full, over the
 * longer interval, as every thread's interval runs from its own last visit.
 *
 * For JS threads (main, workers) it also publishes context switches and page
 * faults (/proc status, stat), so span counters can be derived without a
 * syscall on the span's thread.
 *
 * Where schedstat is missing (kernel without CONFIG_SCHEDSTATS), the interval
 * is attributed to the sampled state instead.
 */
interface Tracked {
  readonly tid: number;
  readonly slot: number;
  /** The thread running the passes (LoopOptions.hostTid): no syscall or wchan reads. */
  readonly host: boolean;
  /** The host, reading its own switches and faults (LoopOptions.hostCounters): no status or stat. */
  readonly ownCounters: boolean;
  syscallFd: number;
  wchanFd: number;
  schedFd: number;
  /** JS threads only: context switches and page faults for span counters. */
  statusFd: number;
  statFd: number;
  /** Last syscall number seen; RUNNING_NR when running; NaN before any read. */
  lastNr: number;
  lastWchanId: number;
  lastOnNs: number;
  lastRqNs: number;
  lastSlices: number;
  /**
   * Off-CPU not yet attributed: negative when schedstat lagged a running
   * thread, positive while a running thread shows a gap with no voluntary
   * switch (run-queue time is accounted only when the thread is picked).
   */
  carryNs: number;
  /** Voluntary context switches at the last pass (JS threads), NaN if unknown. */
  lastVcsw: number;
  /** When this thread was last visited (hrtime ns; 0n: never). */
  lastVisitNs: bigint;
  /** Visits in a row that found it waiting and not scheduled since (non-JS threads with schedstat only). */
  idleVisits: number;
  /** The pass from which its wait channel is due for a re-read. */
  wchanDue: number;
}

export interface LoopOptions {
  readonly procSelf: string;
  readonly pid: number;
  /** The sampler's own thread, excluded (-1: none). */
  readonly selfTid: number;
  /**
   * A tracked thread that runs the passes itself (the main thread when the
   * sampler has no thread of its own): its times and switches are read, but
   * it is always running when it looks, so its off-CPU time is accounted to
   * NR_UNOBSERVED and its futex time is unknown (NaN).
   */
  readonly hostTid?: number;
  /**
   * The host thread's own context switches and page faults, read on that
   * thread (getrusage RUSAGE_THREAD: one syscall instead of reading and
   * parsing /proc status and stat at every pass). Fills [voluntary,
   * involuntary, minor faults, major faults]; false on failure. Without it
   * the host is read from /proc like any JS thread.
   */
  readonly hostCounters?: ((out: Float64Array) => boolean) | undefined;
  readonly futexNrs: readonly number[];
  /** Re-list threads every this many passes. */
  readonly refreshEvery: number;
  /** Re-read a waiting thread's wchan at least every this many passes. */
  readonly wchanEvery: number;
  /**
   * Visit an idle non-JS thread (one found waiting and not scheduled since
   * at {@link IDLE_AFTER} visits in a row: in practice the libuv threadpool
   * of a service that does no file work) only every this many passes; 1
   * (the default here) visits every thread at every pass. Such a thread
   * costs one schedstat read per visit, cold at 10 Hz (13-45 µs on the
   * main thread, where the passes hold the event loop). Once it is seen
   * scheduled it is visited at every pass again. JS threads (main,
   * workers), whose switches and faults feed span counters, are always
   * visited.
   */
  readonly idleEvery?: number;
  /** 'app': main, workers and libuv threadpool threads only; 'all': every thread. */
  readonly threads?: 'app' | 'all';
}

const SYSCALL_BYTES = 4;
const RUNNING = 0x72; // 'r' of "running"
const RUNNING_NR = -1000;
const HOLD_LIMIT_NS = 1e9;
const RECHECK_EVERY = 5;
/** Idle visits in a row after which a non-JS thread is visited only every `idleEvery` passes. */
export const IDLE_AFTER = 3;

/** Passes per second at `intervalMs`: how often to re-list threads and re-read wait channels. */
export function passesPerSecond(intervalMs: number): number {
  return Math.max(1, Math.round(1000 / intervalMs));
}

export class ThreadStateLoop {
  readonly #v: StateViews;
  readonly #o: LoopOptions;
  readonly #threads = new Map<number, Tracked>();
  readonly #wchanIds = new Map<string, number>();
  readonly #sys = Buffer.alloc(SYSCALL_BYTES);
  readonly #text = Buffer.alloc(64);
  readonly #big = Buffer.alloc(2048);
  readonly #hostOut = new Float64Array(4);
  /** [onCpuNs, runqueueNs, timeslices] of the last schedstat read. */
  readonly #sched = new Float64Array(3);
  #passes = 0;
  #refreshes = 0;
  /** Threads not watched in 'app' mode (bounded by the process's threads). */
  readonly #skipped = new Map<number, number>();
  /** Visits of idle threads left out (LoopOptions.idleEvery), counted for tests. */
  idleSkips = 0;
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
    if (this.#passes % this.#o.refreshEvery === 0) this.#refresh();
    const pass = this.#passes++;
    const idleEvery = this.#o.idleEvery ?? 1;
    for (const t of this.#threads.values()) {
      // Idle threads are staggered by slot, so their visits spread over the passes.
      if (t.idleVisits >= IDLE_AFTER && (pass + t.slot) % idleEvery !== 0) {
        this.idleSkips++;
        continue;
      }
      this.#visit(t, now, pass);
    }
    Atomics.add(this.#v.header, H_TICKS, 1);
  }

  /** {@link pass} that never throws: a failed pass and /proc read errors are counted in the table's header. */
  countedPass(): void {
    try {
      this.pass();
    } catch {
      Atomics.add(this.#v.header, H_ERRORS, 1);
    }
    if (this.errors > 0) {
      Atomics.add(this.#v.header, H_ERRORS, this.errors);
      this.errors = 0;
    }
  }

  close(): void {
    for (const t of this.#threads.values()) this.#closeFds(t);
    this.#threads.clear();
  }

  #visit(t: Tracked, now: bigint, pass: number): void {
    const elapsedNs = t.lastVisitNs === 0n ? 0 : Number(now - t.lastVisitNs);
    t.lastVisitNs = now;
    const checkWchan = pass >= t.wchanDue;
    if (checkWchan) t.wchanDue = pass + this.#o.wchanEvery;
    const sched = t.schedFd >= 0 ? this.#readSchedstat(t) : false;
    if (!this.#threads.has(t.tid)) return; // dropped while reading
    const firstSeen = Number.isNaN(t.lastNr);
    // A thread that was waiting at the last pass and has not been scheduled in
    // since (timeslice count unchanged) is still in that wait: no switch, no
    // fault, same syscall. One that was running may have blocked since
    // without a new timeslice, so it is always re-read.
    const scheduled = !sched || firstSeen || sched[2] !== t.lastSlices || t.lastNr === RUNNING_NR;
    const vcsw = t.ownCounters ? this.#readOwnCounters(t) : t.statusFd >= 0 && scheduled ? this.#readSwitchesAndFaults(t) : t.lastVcsw;
    const noVoluntarySwitch = vcsw === t.lastVcsw;
    t.lastVcsw = vcsw;
    if (t.host) {
      // Without schedstat there is nothing to measure for it.
      if (sched) this.#visitHost(t, sched, firstSeen, elapsedNs);
      return;
    }
    if (!sched) {
      // No schedstat: attribute the whole interval to the sampled state.
      t.idleVisits = 0;
      const nr = this.#readSyscallNr(t);
      if (nr === undefined) return;
      this.#noteReason(t, nr, checkWchan);
      if (!firstSeen && elapsedNs > 0 && nr !== RUNNING_NR) this.#account(t, nr, t.lastWchanId, elapsedNs);
      return;
    }
    const onNs = sched[0] as number;
    const rqNs = sched[1] as number;
    const slices = sched[2] as number;
    const dOn = onNs - t.lastOnNs;
    const dRq = rqNs - t.lastRqNs;
    const ran = scheduled || slices !== t.lastSlices;
    t.idleVisits = !ran && !firstSeen && t.statusFd < 0 ? t.idleVisits + 1 : 0;
    t.lastOnNs = onNs;
    t.lastRqNs = rqNs;
    t.lastSlices = slices;
    const prevNr = t.lastNr;
    const prevWchan = t.lastWchanId;
    if (ran || firstSeen) {
      const nr = this.#readSyscallNr(t);
      if (nr === undefined) return;
      this.#noteReason(t, nr, checkWchan);
    } else if (checkWchan && t.lastNr !== RUNNING_NR) {
      t.lastWchanId = this.#readWchan(t);
    }
    if (firstSeen || elapsedNs === 0) return;
    const offNs = t.carryNs + elapsedNs - dOn - dRq;
    if (offNs <= 0) {
      t.carryNs = offNs;
      return;
    }
    if (t.lastNr === RUNNING_NR && (prevNr === RUNNING_NR || Number.isNaN(prevNr)) && noVoluntarySwitch) {
      // Running at both passes without waiting: hold the gap; it is usually
      // run-queue time the next reading accounts for.
      if (offNs < HOLD_LIMIT_NS) {
        t.carryNs = offNs;
        return;
      }
      t.carryNs = 0;
      this.#account(t, NR_NOT_SCHEDULED, 0, offNs);
      return;
    }
    t.carryNs = 0;
    // Waiting now: that wait. Running now: the wait seen before, if any.
    let nr = t.lastNr;
    let wchan = t.lastWchanId;
    if (nr === RUNNING_NR) {
      nr = prevNr === RUNNING_NR || Number.isNaN(prevNr) ? NR_SHORT_WAITS : prevNr;
      wchan = nr === NR_SHORT_WAITS ? 0 : prevWchan;
    }
    this.#account(t, nr, wchan, offNs);
  }

  /** The thread running this pass: off-CPU is measured, its reason is not observable. */
  #visitHost(t: Tracked, sched: Float64Array, firstSeen: boolean, elapsedNs: number): void {
    const onNs = sched[0] as number;
    const rqNs = sched[1] as number;
    const slices = sched[2] as number;
    const offNs = t.carryNs + elapsedNs - (onNs - t.lastOnNs) - (rqNs - t.lastRqNs);
    t.lastOnNs = onNs;
    t.lastRqNs = rqNs;
    t.lastSlices = slices;
    t.lastNr = RUNNING_NR;
    if (firstSeen || elapsedNs === 0) return;
    if (offNs <= 0) {
      t.carryNs = offNs;
      return;
    }
    t.carryNs = 0;
    this.#account(t, NR_UNOBSERVED, 0, offNs);
  }

  #noteReason(t: Tracked, nr: number, checkWchan: boolean): void {
    if (nr === RUNNING_NR) {
      t.lastNr = nr;
      t.lastWchanId = 0;
      return;
    }
    if (nr !== t.lastNr || checkWchan) t.lastWchanId = this.#readWchan(t);
    t.lastNr = nr;
  }

  #account(t: Tracked, nr: number, wchanId: number, ns: number): void {
    const v = this.#v;
    const off = valueIndex(t.slot, F_OFFCPU);
    v.values[off] = (v.values[off] ?? 0) + ns;
    if (this.#o.futexNrs.includes(nr)) {
      const fx = valueIndex(t.slot, F_FUTEX);
      v.values[fx] = (v.values[fx] ?? 0) + ns;
    }
    const key = reasonKeyOf(nr, wchanId);
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
    else if (b[0] === 0x2d) nr = NR_NOT_IN_SYSCALL; // "-1 ..."
    else {
      let x = 0;
      for (let i = 0; i < n; i++) {
        const c = b[i] ?? 0;
        if (c < 0x30 || c > 0x39) break;
        x = x * 10 + (c - 0x30);
      }
      nr = x;
    }
    b.fill(0);
    return nr;
  }

  /** What {@link #readSwitchesAndFaults} does, for the host, through `hostCounters`. */
  #readOwnCounters(host: Tracked): number {
    const out = this.#hostOut;
    if (this.#o.hostCounters?.(out) !== true) return Number.NaN;
    const voluntary = out[0] ?? Number.NaN;
    const v = this.#v.values;
    v[valueIndex(host.slot, F_VCSW)] = voluntary;
    v[valueIndex(host.slot, F_IVCSW)] = out[1] ?? Number.NaN;
    v[valueIndex(host.slot, F_FAULTS)] = (out[2] ?? Number.NaN) + (out[3] ?? Number.NaN);
    return voluntary;
  }

  /** Publishes switches and faults; returns voluntary switches (NaN on failure). */
  #readSwitchesAndFaults(t: Tracked): number {
    const v = this.#v;
    let voluntary = Number.NaN;
    try {
      let n = readSync(t.statusFd, this.#big, 0, this.#big.length, 0);
      const status = this.#big.toString('latin1', 0, n);
      const vol = /^voluntary_ctxt_switches:\s+(\d+)/m.exec(status);
      const invol = /^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(status);
      if (vol && invol) {
        voluntary = Number(vol[1]);
        v.values[valueIndex(t.slot, F_VCSW)] = voluntary;
        v.values[valueIndex(t.slot, F_IVCSW)] = Number(invol[1]);
      }
      if (t.statFd < 0) return voluntary;
      n = readSync(t.statFd, this.#big, 0, this.#big.length, 0);
      const stat = this.#big.toString('latin1', 0, n);
      // After "(comm) ": state, ppid, ... minflt is the 8th field, majflt the 10th.
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ', 10);
      const faults = Number(f[7]) + Number(f[9]);
      if (Number.isFinite(faults)) v.values[valueIndex(t.slot, F_FAULTS)] = faults;
    } catch {
      t.statusFd = closeFd(t.statusFd);
      t.statFd = closeFd(t.statFd);
    }
    return voluntary;
  }

  #readWchan(t: Tracked): number {
    if (t.wchanFd < 0) return 0;
    try {
      const n = readSync(t.wchanFd, this.#text, 0, this.#text.length, 0);
      const name = this.#text.toString('latin1', 0, n);
      return name === '' || name === '0' ? 0 : internWchan(this.#v, this.#wchanIds, name);
    } catch {
      return 0;
    }
  }

  /**
   * [onCpuNs, runqueueNs, timeslices] in the loop's kept array (valid until
   * the next read), also published to the table; false on failure.
   */
  #readSchedstat(t: Tracked): Float64Array | false {
    try {
      const n = readSync(t.schedFd, this.#text, 0, this.#text.length, 0);
      // Three decimal numbers and a newline, parsed from the bytes: no string
      // per read (this runs for every visited thread, 10 times a second).
      const out = this.#sched;
      const b = this.#text;
      let field = 0;
      let x = 0;
      let digits = 0;
      for (let i = 0; i < n && field < 3; i++) {
        const c = b[i] as number;
        if (c >= 0x30 && c <= 0x39) {
          x = x * 10 + (c - 0x30);
          digits++;
        } else if (digits > 0 && (c === 0x20 || c === 0x0a)) {
          out[field++] = x;
          x = 0;
          digits = 0;
        } else return false;
      }
      if (field < 3 && digits > 0) out[field++] = x;
      if (field < 3) return false;
      this.#v.values[valueIndex(t.slot, F_ONCPU)] = out[0] as number;
      this.#v.values[valueIndex(t.slot, F_RUNQUEUE)] = out[1] as number;
      return out;
    } catch {
      // ESRCH: the thread exited; otherwise fall back to sampling.
      if (!this.#alive(t.tid)) this.#drop(t);
      else t.schedFd = closeFd(t.schedFd);
      return false;
    }
  }

  #alive(tid: number): boolean {
    return this.#comm(tid) !== undefined;
  }

  /** The thread's name, or undefined if it is gone. */
  #comm(tid: number): string | undefined {
    return readComm(`${this.#o.procSelf}/task/${tid}/comm`);
  }

  #refresh(): void {
    // Names change rarely (a worker names itself once, early): re-read the
    // names of threads we skip only every RECHECK_EVERY refreshes.
    const round = this.#refreshes++;
    const recheck = round % RECHECK_EVERY === 0;
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
      const known = this.#threads.get(tid);
      if (known) {
        live.add(tid);
        // A worker names itself after it started.
        if (recheck && known.statusFd < 0 && !known.ownCounters && this.#isJsThread(tid)) {
          known.statusFd = this.#open(tid, 'status');
          known.statFd = this.#open(tid, 'stat');
        }
        continue;
      }
      const skippedAt = this.#skipped.get(tid);
      // New threads are re-checked at every refresh for a while: a worker
      // names itself shortly after it starts.
      if (skippedAt !== undefined && !recheck && round - skippedAt > RECHECK_EVERY) {
        live.add(tid);
        continue;
      }
      if (!this.#wanted(tid)) {
        if (skippedAt === undefined) this.#skipped.set(tid, round);
        live.add(tid);
        continue;
      }
      this.#skipped.delete(tid);
      live.add(tid);
      this.#track(tid);
    }
    for (const t of this.#threads.values()) if (!live.has(t.tid)) this.#drop(t);
    for (const tid of this.#skipped.keys()) if (!live.has(tid)) this.#skipped.delete(tid);
  }

  #isJsThread(tid: number): boolean {
    if (tid === this.#o.pid) return true;
    const comm = this.#comm(tid);
    return comm !== undefined && /^w\d+:/.test(comm);
  }

  /** In 'app' mode: main, named workers, the libuv threadpool. */
  #wanted(tid: number): boolean {
    if (this.#o.threads !== 'app' || tid === this.#o.pid) return true;
    const comm = this.#comm(tid);
    return comm !== undefined && (comm === 'libuv-worker' || /^w\d+:/.test(comm));
  }

  #track(tid: number): void {
    const slot = this.#claimSlot(tid);
    if (slot < 0) return;
    const host = tid === this.#o.hostTid;
    const syscallFd = host ? -1 : this.#open(tid, 'syscall');
    if (syscallFd < 0 && !host) {
      this.#releaseSlot(slot);
      return;
    }
    if (host) this.#v.values[valueIndex(slot, F_FUTEX)] = Number.NaN;
    const ownCounters = host && this.#o.hostCounters !== undefined;
    const js = !ownCounters && this.#isJsThread(tid);
    const t: Tracked = {
      tid,
      slot,
      host,
      ownCounters,
      syscallFd,
      wchanFd: host ? -1 : this.#open(tid, 'wchan'),
      schedFd: this.#open(tid, 'schedstat'),
      statusFd: js ? this.#open(tid, 'status') : -1,
      statFd: js ? this.#open(tid, 'stat') : -1,
      lastNr: Number.NaN,
      lastWchanId: 0,
      lastOnNs: 0,
      lastRqNs: 0,
      lastSlices: -1,
      carryNs: 0,
      lastVcsw: Number.NaN,
      lastVisitNs: 0n,
      idleVisits: 0,
      wchanDue: 0,
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
      v.values.fill(Number.NaN, valueIndex(i, F_VCSW), valueIndex(i, F_FAULTS) + 1);
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
    t.statusFd = closeFd(t.statusFd);
    t.statFd = closeFd(t.statFd);
  }
}
