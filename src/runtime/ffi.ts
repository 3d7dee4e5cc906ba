import { createRequire } from 'node:module';
import { isMainThread } from 'node:worker_threads';
import { describe } from '../core/diagnostics.js';
import { SYS } from './syscalls.js';

/**
 * The few libc entry points spanfuse calls through koffi (an optional
 * dependency). Loaded on first use, on the main thread only (never in a
 * worker, see load()); when koffi or libc is missing every caller falls
 * back to pure /proc and reports why.
 */
export interface Libc {
  gettid(): number;
  /** getrusage(RUSAGE_THREAD) into a 144-byte buffer; returns 0 on success. */
  getrusageThread(out: Uint8Array): number;
  /** perf_event_open(attr, pid, cpu, group_fd, flags); -1 and errno on failure. */
  perfEventOpen(attr: Uint8Array, pid: number, cpu: number, groupFd: number, flags: number): number;
  memfdCreate(name: string, flags: number): number;
  /** Maps `length` bytes; undefined on MAP_FAILED. */
  mmap(length: number, prot: number, flags: number, fd: number): Mapping | undefined;
  madvise(addr: bigint, length: number, advice: number): number;
  /** prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, addr, len, name). */
  nameAnonMapping(addr: bigint, length: number, name: string): number;
  mkfifo(path: string, mode: number): number;
  errno(): number;
}

/** A mapping made by {@link Libc.mmap}: its address and a view of its bytes. */
export interface Mapping {
  readonly addr: bigint;
  readonly bytes: Uint8Array;
}

export type LibcResult = { readonly ok: true; readonly libc: Libc } | { readonly ok: false; readonly reason: string };

let cached: LibcResult | undefined;

/** koffi-backed libc for this thread, or the reason it is unavailable. */
export function loadLibc(): LibcResult {
  cached ??= load();
  return cached;
}

// koffi's own types are loose (`any` for function handles); keep them in here.
/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return */
function load(): LibcResult {
  if (process.platform !== 'linux') return { ok: false, reason: `koffi libc binding is Linux-only (${process.platform})` };
  const nums = process.arch === 'x64' ? SYS.x64 : process.arch === 'arm64' ? SYS.arm64 : undefined;
  if (nums === undefined) return { ok: false, reason: `no syscall numbers for ${process.arch}` };
  // A worker can be terminated at any moment, also while koffi's native module
  // initialises: koffi then calls napi_throw in a dying environment and
  // node-addon-api aborts the whole process (seen on Node 24). Nothing a worker
  // does needs libc, so koffi is never loaded there.
  if (!isMainThread) return { ok: false, reason: 'koffi is loaded on the main thread only' };
  let koffi: any;
  try {
    koffi = createRequire(import.meta.url)('koffi');
  } catch (err) {
    return { ok: false, reason: `koffi (optional dependency) not available: ${describe(err)}` };
  }
  try {
    const lib = koffi.load('libc.so.6');
    const syscall = lib.func('long syscall(long, ...)');
    // Plain pointer, not _Out_: koffi then writes into the caller's buffer without a copy step.
    const getrusage = lib.func('int getrusage(int, uint8_t *buf)');
    const mmap = lib.func('void *mmap(void *addr, size_t len, int prot, int flags, int fd, long off)');
    const madvise = lib.func('int madvise(uintptr_t addr, size_t len, int advice)');
    const prctl = lib.func('int prctl(int option, unsigned long a2, uintptr_t a3, unsigned long a4, const char *a5)');
    const mkfifo = lib.func('int mkfifo(const char *path, uint32_t mode)');
    const libc: Libc = {
      mkfifo: (path, mode) => mkfifo(path, mode),
      gettid: () => Number(syscall(nums.gettid)),
      getrusageThread: (out) => getrusage(1 /* RUSAGE_THREAD */, out),
      perfEventOpen: (attr, pid, cpu, groupFd, flags) =>
        Number(
          syscall(nums.perf_event_open, 'uint8_t *', attr, 'int', pid, 'int', cpu, 'int', groupFd, 'unsigned long', flags),
        ),
      memfdCreate: (name, flags) => Number(syscall(nums.memfd_create, 'const char *', name, 'unsigned int', flags)),
      mmap: (length, prot, flags, fd) => {
        const p = mmap(null, length, prot, flags, fd, 0);
        const addr = BigInt(koffi.address(p));
        if (addr === 0xffffffffffffffffn || addr === 0n) return undefined;
        return { addr, bytes: new Uint8Array(koffi.view(p, length)) };
      },
      madvise: (addr, length, advice) => madvise(addr, length, advice),
      nameAnonMapping: (addr, length, name) => prctl(0x53564d41 /* PR_SET_VMA */, 0, addr, length, name),
      errno: () => koffi.errno(),
    };
    return { ok: true, libc };
  } catch (err) {
    return { ok: false, reason: `koffi could not bind libc: ${describe(err)}` };
  }
}
