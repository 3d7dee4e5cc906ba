import { loadLibc } from './ffi.js';
import type { Libc } from './ffi.js';
import {
  PERF_COUNT_HW_CPU_CYCLES,
  PERF_COUNT_HW_INSTRUCTIONS,
  PERF_COUNT_SW_CONTEXT_SWITCHES,
  PERF_COUNT_SW_PAGE_FAULTS,
  PERF_COUNT_SW_TASK_CLOCK,
  PERF_FORMAT_GROUP,
  PERF_FORMAT_TOTAL_TIME_ENABLED,
  PERF_FORMAT_TOTAL_TIME_RUNNING,
  PERF_HW_CACHE_LL_READ_MISS,
  PERF_TYPE_HARDWARE,
  PERF_TYPE_HW_CACHE,
  PERF_TYPE_SOFTWARE,
  encodePerfAttr,
} from './perf-attr.js';
import { fs } from '../core/builtins.js';

const { closeSync, existsSync, readSync, readdirSync, readlinkSync } = fs;

/**
 * Tier 1: per-thread perf counters read as one group (PERF_FORMAT_GROUP, one
 * read(2) of ~1.3 µs). Counting only, never sampling: no registers or stacks
 * are collected. A counter the kernel refuses is "unsupported" with the
 * reason, never zero. An open counter is not free between reads: the kernel
 * switches the thread's perf context out and in at each of its context
 * switches (~1 µs a switch measured on this project's VM, `bench/io`).
 */
export interface PerfEventSpec {
  /** Span attribute name, e.g. `profiler.cpu.cycles`. */
  readonly name: string;
  readonly type: number;
  readonly config: number;
  readonly excludeKernel?: boolean;
}

export const HARDWARE_EVENTS: readonly PerfEventSpec[] = [
  { name: 'profiler.cpu.cycles', type: PERF_TYPE_HARDWARE, config: PERF_COUNT_HW_CPU_CYCLES, excludeKernel: true },
  { name: 'profiler.instructions', type: PERF_TYPE_HARDWARE, config: PERF_COUNT_HW_INSTRUCTIONS, excludeKernel: true },
  { name: 'profiler.l3.misses', type: PERF_TYPE_HW_CACHE, config: PERF_HW_CACHE_LL_READ_MISS },
];

/**
 * Kernel software counters. spanfuse no longer opens them (the main
 * thread's CPU time, switches and faults come from getrusage, which costs
 * nothing between reads, where an open perf event taxes every switch of its
 * thread; see `RuntimeConfig.perfEvents`); kept for `PerfGroup`'s own checks
 * on machines without a PMU.
 */
export const SOFTWARE_EVENTS: readonly PerfEventSpec[] = [
  { name: 'perf.task_clock_ns', type: PERF_TYPE_SOFTWARE, config: PERF_COUNT_SW_TASK_CLOCK },
  { name: 'perf.context_switches', type: PERF_TYPE_SOFTWARE, config: PERF_COUNT_SW_CONTEXT_SWITCHES },
  { name: 'perf.page_faults', type: PERF_TYPE_SOFTWARE, config: PERF_COUNT_SW_PAGE_FAULTS },
];

const ERRNO_NAMES: Readonly<Record<number, string>> = {
  1: 'EPERM',
  2: 'ENOENT',
  13: 'EACCES',
  19: 'ENODEV',
  22: 'EINVAL',
  24: 'EMFILE',
  95: 'EOPNOTSUPP',
};

export function perfErrnoReason(errno: number, pmuPresent: boolean): string {
  const name = ERRNO_NAMES[errno] ?? `errno ${errno}`;
  if (errno === 2 || errno === 19 || errno === 95) return `${name}: ${pmuPresent ? 'event not supported by the PMU' : 'no hardware PMU'}`;
  if (errno === 13 || errno === 1) return `${name}: perf events not permitted (perf_event_paranoid, seccomp or missing CAP_PERFMON)`;
  return `${name}: perf_event_open failed`;
}

/** perf event file descriptors open in this process (Linux; 0 where /proc is missing). */
export function perfEventFdCount(procSelf = '/proc/self'): number {
  let names: string[];
  try {
    names = readdirSync(`${procSelf}/fd`);
  } catch {
    return 0;
  }
  let n = 0;
  for (const fd of names) {
    try {
      if (readlinkSync(`${procSelf}/fd/${fd}`) === 'anon_inode:[perf_event]') n++;
    } catch {
      // closed meanwhile (the directory's own fd)
    }
  }
  return n;
}

export function pmuPresent(sysfs = '/sys/bus/event_source/devices/cpu'): boolean {
  return existsSync(sysfs);
}

export interface PerfGroupResult {
  readonly group?: PerfGroup;
  /** Counter name -> why it is unavailable. */
  readonly unsupported: Readonly<Record<string, string>>;
}

/**
 * A counter group on the calling thread (pid 0, any CPU). Events the kernel
 * refuses are left out and reported; the first accepted one leads.
 */
export class PerfGroup {
  readonly names: readonly string[];
  readonly #fds: number[];
  readonly #buf: Buffer;
  readonly #dv: DataView;

  private constructor(names: string[], fds: number[]) {
    this.names = names;
    this.#fds = fds;
    // nr, time_enabled, time_running, value * nr
    this.#buf = Buffer.alloc(8 * (3 + names.length));
    this.#dv = new DataView(this.#buf.buffer, this.#buf.byteOffset, this.#buf.byteLength);
  }

  static open(specs: readonly PerfEventSpec[], libcOverride?: Libc): PerfGroupResult {
    const unsupported: Record<string, string> = {};
    let libc = libcOverride;
    if (!libc) {
      const l = loadLibc();
      if (!l.ok) {
        for (const s of specs) unsupported[s.name] = l.reason;
        return { unsupported };
      }
      libc = l.libc;
    }
    const pmu = pmuPresent();
    const names: string[] = [];
    const fds: number[] = [];
    const readFormat = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    for (const s of specs) {
      const attr = encodePerfAttr({
        type: s.type,
        config: s.config,
        readFormat,
        excludeKernel: s.excludeKernel === true,
        excludeHv: true,
      });
      const fd = libc.perfEventOpen(attr, 0, -1, fds[0] ?? -1, 0);
      if (fd < 0) {
        unsupported[s.name] = perfErrnoReason(libc.errno(), pmu);
        continue;
      }
      names.push(s.name);
      fds.push(fd);
    }
    if (fds.length === 0) return { unsupported };
    return { group: new PerfGroup(names, fds), unsupported };
  }

  /** Reads every counter into `out` (same order as `names`); false on failure. */
  read(out: Float64Array): boolean {
    const leader = this.#fds[0];
    if (leader === undefined) return false;
    try {
      const n = readSync(leader, this.#buf, 0, this.#buf.length, null);
      if (n < 24) return false;
      const nr = Number(this.#dv.getBigUint64(0, true));
      for (let i = 0; i < nr && i < this.names.length; i++) out[i] = Number(this.#dv.getBigUint64(24 + 8 * i, true));
      return true;
    } catch {
      return false;
    }
  }

  close(): void {
    for (const fd of this.#fds.splice(0)) {
      try {
        closeSync(fd);
      } catch {
        // ignore
      }
    }
  }
}
