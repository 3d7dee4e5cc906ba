import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe } from '../core/diagnostics.js';
import { loadLibc } from './ffi.js';
import { fs } from '../core/builtins.js';

const { closeSync, constants, mkdtempSync, open, openSync, readFileSync, readdirSync, rmSync, writeFileSync } = fs;

/**
 * Finds the libuv threadpool threads of a running process by making each of
 * them block where we can see it: `poolSize` asynchronous opens of a FIFO
 * with no writer park every pool thread in the kernel's `wait_for_partner`. Threads
 * seen waiting there are the pool; they are renamed `libuv-worker`, and then a
 * read-write open of the FIFO releases them. Used when the pool already
 * existed before spanfuse started (ESM loading creates it), so the naming by
 * inheritance in `ThreadInventory.captureStartup()` could not work.
 */
export interface PoolProbeResult {
  readonly tids: readonly number[];
  readonly reason?: string;
}

const POLL_MS = 2;
// Where a reader waits for a FIFO writer (fs/pipe.c).
const WCHAN_FIFO_OPEN = 'wait_for_partner';
const DEADLINE_MS = 1000;

export async function probeThreadpool(poolSize: number, comm: string, procSelf = '/proc/self'): Promise<PoolProbeResult> {
  const libc = loadLibc();
  if (!libc.ok) return { tids: [], reason: libc.reason };
  let dir: string;
  try {
    dir = mkdtempSync(join(tmpdir(), 'spanfuse-pool-'));
  } catch (err) {
    return { tids: [], reason: `cannot create a temp dir: ${describe(err)}` };
  }
  const fifo = join(dir, 'probe');
  // The process can end while pool threads are parked here (an uncaught
  // exception or process.exit() right after start-up), and Node 20 joins
  // the pool at exit: a thread parked in the FIFO's open would hang the exit
  // forever (5 of 20 runs of a script that throws at once, measured). So an
  // exit meanwhile releases them first (the read-write end stays open until
  // the process is gone, so readers still queued pass too).
  const onExit = (): void => {
    try {
      openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
    } catch {
      // no FIFO yet, or already gone: nothing is parked
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.prependListener('exit', onExit);
  try {
    if (libc.libc.mkfifo(fifo, 0o600) !== 0) return { tids: [], reason: `mkfifo failed (errno ${libc.libc.errno()})` };
    const readers: Promise<number | undefined>[] = [];
    for (let i = 0; i < poolSize; i++) {
      readers.push(new Promise((resolve) => open(fifo, 'r', (err, fd) => resolve(err ? undefined : fd))));
    }
    const found = await waitForBlocked(procSelf, poolSize);
    // O_RDWR on a FIFO never blocks and satisfies every pending and queued
    // reader, so no pool thread can stay parked whatever happened above.
    const release = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
    const fds = await Promise.all(readers);
    for (const fd of fds) if (fd !== undefined) closeSync(fd);
    closeSync(release);
    for (const tid of found) {
      try {
        writeFileSync(`${procSelf}/task/${tid}/comm`, comm);
      } catch {
        // the thread may have exited; it is simply not named
      }
    }
    if (found.length < poolSize) {
      return { tids: found, reason: `found ${found.length} of ${poolSize} pool threads (pool busy?)` };
    }
    return { tids: found };
  } catch (err) {
    return { tids: [], reason: describe(err) };
  } finally {
    process.removeListener('exit', onExit);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function waitForBlocked(procSelf: string, want: number): Promise<number[]> {
  const deadline = Date.now() + DEADLINE_MS;
  let found: number[] = [];
  while (Date.now() < deadline) {
    found = blockedInFifoOpen(procSelf);
    if (found.length >= want) break;
    await new Promise((r) => setTimeout(r, POLL_MS).unref());
  }
  return found;
}

function blockedInFifoOpen(procSelf: string): number[] {
  const out: number[] = [];
  let tids: string[];
  try {
    tids = readdirSync(`${procSelf}/task`);
  } catch {
    return out;
  }
  for (const t of tids) {
    try {
      if (readFileSync(`${procSelf}/task/${t}/wchan`, 'latin1') === WCHAN_FIFO_OPEN) out.push(Number(t));
    } catch {
      // exited
    }
  }
  return out;
}
