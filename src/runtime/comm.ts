import { fs } from '../core/builtins.js';

const { closeSync, openSync, readSync } = fs;

/** A thread's `comm` is at most 15 bytes and a newline. */
const buf = Buffer.alloc(64);

/**
 * A thread's kernel name from its `comm` file (`/proc/.../task/<tid>/comm`),
 * without the newline; undefined if the file cannot be read (the thread is
 * gone). Open, read and close into a kept buffer: `readFileSync` also stats
 * the file, allocates and decodes, several times as long, and the
 * thread-state passes read the names of the threads they skip every few
 * seconds on the event loop.
 */
export function readComm(path: string): string | undefined {
  let fd = -1;
  try {
    fd = openSync(path, 'r');
    const n = readSync(fd, buf, 0, buf.length, 0);
    return buf.toString('latin1', 0, n).trimEnd();
  } catch {
    return undefined;
  } finally {
    closeFd(fd);
  }
}

/** Close `fd` if open (>= 0), ignoring errors (a /proc file of a thread that is gone); returns -1 to store back. */
export function closeFd(fd: number): number {
  if (fd >= 0) {
    try {
      closeSync(fd);
    } catch {
      // already gone
    }
  }
  return -1;
}
