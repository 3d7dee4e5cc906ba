import { loadLibc } from './ffi.js';
import { fs } from '../core/builtins.js';

const { closeSync, openSync, readSync } = fs;

/**
 * Tier 0 per-thread counters of the calling thread: CPU time, context
 * switches, page faults (getrusage(RUSAGE_THREAD) through koffi, ~0.6 µs, or
 * /proc/thread-self/stat + status without koffi) and run-queue delay
 * (/proc/thread-self/schedstat).
 */
export interface ThreadCounters {
  readonly cpuUserNs: number;
  readonly cpuSystemNs: number;
  readonly ctxSwitchesVoluntary: number;
  readonly ctxSwitchesInvoluntary: number;
  readonly minorFaults: number;
  readonly majorFaults: number;
  /** schedstat; undefined when the kernel lacks CONFIG_SCHEDSTATS. */
  readonly runqueueDelayNs?: number;
  readonly onCpuNs?: number;
  readonly source: 'getrusage' | 'proc';
}

const RUSAGE_BYTES = 144;

/** Per-thread reader; create it on the thread it measures. */
export class ThreadCounterReader {
  readonly #rusage = new Uint8Array(RUSAGE_BYTES);
  readonly #dv = new DataView(this.#rusage.buffer);
  readonly #getrusage: ((out: Uint8Array) => number) | undefined;
  readonly #text = Buffer.alloc(2048);
  #schedFd = -2;
  #statFd = -2;
  #statusFd = -2;
  readonly clkTck: number;

  constructor(options: { useKoffi?: boolean; clkTck?: number } = {}) {
    this.clkTck = options.clkTck ?? 100;
    if (options.useKoffi !== false) {
      const libc = loadLibc();
      if (libc.ok) {
        const l = libc.libc;
        this.#getrusage = (out) => l.getrusageThread(out);
      }
    }
  }

  get source(): 'getrusage' | 'proc' {
    return this.#getrusage ? 'getrusage' : 'proc';
  }

  /** Fills `out` [voluntary, involuntary, minflt, majflt]; false on failure. */
  readSwitchesAndFaults(out: Float64Array): boolean {
    if (this.#getrusage) {
      if (this.#getrusage(this.#rusage) !== 0) return false;
      // Two 32-bit halves instead of BigInt: this runs twice per span.
      const dv = this.#dv;
      out[0] = dv.getUint32(128, true) + dv.getUint32(132, true) * 0x1_0000_0000;
      out[1] = dv.getUint32(136, true) + dv.getUint32(140, true) * 0x1_0000_0000;
      out[2] = dv.getUint32(64, true) + dv.getUint32(68, true) * 0x1_0000_0000;
      out[3] = dv.getUint32(72, true) + dv.getUint32(76, true) * 0x1_0000_0000;
      return true;
    }
    const c = this.#fromProc();
    if (c === undefined) return false;
    out[0] = c.ctxSwitchesVoluntary;
    out[1] = c.ctxSwitchesInvoluntary;
    out[2] = c.minorFaults;
    out[3] = c.majorFaults;
    return true;
  }

  /** [onCpuNs, runqueueNs] from schedstat, or undefined. */
  readSchedstat(): [number, number] | undefined {
    if (this.#schedFd === -2) this.#schedFd = tryOpen('/proc/thread-self/schedstat');
    if (this.#schedFd < 0) return undefined;
    try {
      const n = readSync(this.#schedFd, this.#text, 0, 128, 0);
      const parts = this.#text.toString('latin1', 0, n).split(' ');
      const on = Number(parts[0]);
      const rq = Number(parts[1]);
      return Number.isFinite(on) && Number.isFinite(rq) ? [on, rq] : undefined;
    } catch {
      return undefined;
    }
  }

  read(): ThreadCounters | undefined {
    const sched = this.readSchedstat();
    const schedPart = sched ? { onCpuNs: sched[0], runqueueDelayNs: sched[1] } : {};
    if (this.#getrusage) {
      if (this.#getrusage(this.#rusage) !== 0) return undefined;
      const dv = this.#dv;
      const tv = (off: number): number => Number(dv.getBigInt64(off, true)) * 1e9 + Number(dv.getBigInt64(off + 8, true)) * 1e3;
      return {
        cpuUserNs: tv(0),
        cpuSystemNs: tv(16),
        minorFaults: Number(dv.getBigInt64(64, true)),
        majorFaults: Number(dv.getBigInt64(72, true)),
        ctxSwitchesVoluntary: Number(dv.getBigInt64(128, true)),
        ctxSwitchesInvoluntary: Number(dv.getBigInt64(136, true)),
        source: 'getrusage',
        ...schedPart,
      };
    }
    const p = this.#fromProc();
    return p ? { ...p, ...schedPart } : undefined;
  }

  #fromProc(): Omit<ThreadCounters, 'runqueueDelayNs' | 'onCpuNs'> | undefined {
    if (this.#statFd === -2) this.#statFd = tryOpen('/proc/thread-self/stat');
    if (this.#statusFd === -2) this.#statusFd = tryOpen('/proc/thread-self/status');
    if (this.#statFd < 0 || this.#statusFd < 0) return undefined;
    try {
      let n = readSync(this.#statFd, this.#text, 0, this.#text.length, 0);
      const stat = this.#text.toString('latin1', 0, n);
      // Fields after "(comm)": state is field 3; minflt 10, majflt 12, utime 14, stime 15.
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const tick = 1e9 / this.clkTck;
      n = readSync(this.#statusFd, this.#text, 0, this.#text.length, 0);
      const status = this.#text.toString('latin1', 0, n);
      const vol = /^voluntary_ctxt_switches:\s+(\d+)/m.exec(status);
      const invol = /^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(status);
      return {
        minorFaults: Number(f[7]),
        majorFaults: Number(f[9]),
        cpuUserNs: Number(f[11]) * tick,
        cpuSystemNs: Number(f[12]) * tick,
        ctxSwitchesVoluntary: Number(vol?.[1]),
        ctxSwitchesInvoluntary: Number(invol?.[1]),
        source: 'proc',
      };
    } catch {
      return undefined;
    }
  }

  close(): void {
    for (const fd of [this.#schedFd, this.#statFd, this.#statusFd]) {
      if (fd >= 0) {
        try {
          closeSync(fd);
        } catch {
          // ignore
        }
      }
    }
    this.#schedFd = this.#statFd = this.#statusFd = -2;
  }
}

function tryOpen(path: string): number {
  try {
    return openSync(path, 'r');
  } catch {
    return -1;
  }
}
