import type { Arch } from './platform.js';

/**
 * Names of the syscalls a Node.js thread is usually blocked in, by number.
 * Only numbers are read from /proc (never arguments); an unknown number is
 * reported as `syscall_<n>`.
 */
const X64: Readonly<Record<number, string>> = {
  0: 'read',
  1: 'write',
  7: 'poll',
  17: 'pread64',
  18: 'pwrite64',
  19: 'readv',
  20: 'writev',
  23: 'select',
  35: 'nanosleep',
  43: 'accept',
  45: 'recvfrom',
  47: 'recvmsg',
  61: 'wait4',
  72: 'fcntl',
  74: 'fsync',
  75: 'fdatasync',
  202: 'futex',
  230: 'clock_nanosleep',
  232: 'epoll_wait',
  257: 'openat',
  270: 'pselect6',
  271: 'ppoll',
  281: 'epoll_pwait',
  288: 'accept4',
  295: 'preadv',
  296: 'pwritev',
  425: 'io_uring_setup',
  426: 'io_uring_enter',
  441: 'epoll_pwait2',
  449: 'futex_waitv',
};

const ARM64: Readonly<Record<number, string>> = {
  22: 'epoll_pwait',
  25: 'fcntl',
  56: 'openat',
  63: 'read',
  64: 'write',
  65: 'readv',
  66: 'writev',
  67: 'pread64',
  68: 'pwrite64',
  69: 'preadv',
  70: 'pwritev',
  72: 'pselect6',
  73: 'ppoll',
  82: 'fsync',
  83: 'fdatasync',
  98: 'futex',
  101: 'nanosleep',
  115: 'clock_nanosleep',
  202: 'accept',
  207: 'recvfrom',
  212: 'recvmsg',
  242: 'accept4',
  260: 'wait4',
  426: 'io_uring_enter',
  441: 'epoll_pwait2',
  449: 'futex_waitv',
};

export function syscallName(arch: Arch | undefined, nr: number): string {
  const table = arch === 'arm64' ? ARM64 : arch === 'x64' ? X64 : undefined;
  return table?.[nr] ?? `syscall_${nr}`;
}

/** Syscall numbers of futex waits (futex, futex_waitv) on this architecture. */
export function futexSyscalls(arch: Arch | undefined): readonly number[] {
  if (arch === 'x64') return [202, 449];
  if (arch === 'arm64') return [98, 449];
  return [];
}

/** Numbers used to issue syscalls ourselves through koffi. */
export const SYS = {
  x64: { gettid: 186, perf_event_open: 298, memfd_create: 319 },
  arm64: { gettid: 178, perf_event_open: 241, memfd_create: 279 },
} as const;
