import type { StatsFs } from 'node:fs';
import { open, statfs } from 'node:fs/promises';
import { fs } from '../core/builtins.js';

const { closeSync, fstatSync, ftruncateSync, openSync, statfsSync, writeSync } = fs;

/** What an append of whole lines achieved. */
export interface LinesWritten {
  /** Lines now in the file, complete. */
  readonly lines: number;
  /** Lines that did not fit (disk full) and were left out. */
  readonly dropped: number;
  /** Why some lines were left out (the write error), if any. */
  readonly error?: unknown;
}

/**
 * Append `text` (complete lines, each ending in `\n`) to `path` with one
 * write. A short write or an error (a full disk) never leaves a partial line:
 * the file is cut back to the end of the last complete line written, so a
 * reader only ever sees whole lines and the next append starts on a fresh one.
 */
export function appendWholeLinesSync(path: string, text: string | Buffer): LinesWritten {
  const buf = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  const fd = openSync(path, 'a', 0o600);
  try {
    const start = fstatSync(fd).size;
    let n = 0;
    let error: unknown;
    try {
      n = writeSync(fd, buf, 0, buf.length);
    } catch (err) {
      error = err;
    }
    if (n === buf.length) return { lines: countLines(buf, n), dropped: 0 };
    const keep = wholePrefix(buf, n);
    try {
      ftruncateSync(fd, start + keep);
    } catch (err) {
      error ??= err;
    }
    return cut(buf, keep, error);
  } finally {
    closeSync(fd);
  }
}

/** The same as {@link appendWholeLinesSync}, without blocking the event loop. */
export async function appendWholeLines(path: string, text: string | Buffer): Promise<LinesWritten> {
  const buf = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  const fh = await open(path, 'a', 0o600);
  try {
    const start = (await fh.stat()).size;
    let n = 0;
    let error: unknown;
    try {
      n = (await fh.write(buf, 0, buf.length)).bytesWritten;
    } catch (err) {
      error = err;
    }
    if (n === buf.length) return { lines: countLines(buf, n), dropped: 0 };
    const keep = wholePrefix(buf, n);
    try {
      await fh.truncate(start + keep);
    } catch (err) {
      error ??= err;
    }
    return cut(buf, keep, error);
  } finally {
    await fh.close();
  }
}

function cut(buf: Buffer, keep: number, error: unknown): LinesWritten {
  const lines = countLines(buf, keep);
  const dropped = countLines(buf, buf.length) - lines;
  return { lines, dropped, error: error ?? new Error(`short write: ${keep} of ${buf.length} bytes kept (disk full?)`) };
}

/** Bytes of `buf[0, n)` up to and including its last newline. */
function wholePrefix(buf: Buffer, n: number): number {
  if (n <= 0) return 0;
  const i = buf.subarray(0, n).lastIndexOf(0x0a);
  return i + 1;
}

/** Newlines (complete lines) in `buf[0, n)`. */
export function countLines(buf: Buffer, n: number): number {
  let c = 0;
  for (let i = buf.indexOf(0x0a); i !== -1 && i < n; i = buf.indexOf(0x0a, i + 1)) c++;
  return c;
}

/**
 * Space `spans.jsonl` leaves free on its filesystem for profile windows: a
 * quarter of the filesystem, at most 8 MiB. Profiles are spanfuse's main
 * output; on a small disk that fills up, span lines give way first.
 */
function reserveBytes(fs: StatsFs): number {
  return Math.min(8 * 1024 * 1024, Math.floor((fs.blocks * fs.bsize) / 4));
}

function leavesReserve(fs: StatsFs, bytes: number): boolean {
  return fs.bavail * fs.bsize - bytes >= reserveBytes(fs);
}

/** True when appending `bytes` in `dir` leaves the reserve free (or the filesystem cannot say). */
export function roomForSync(dir: string, bytes: number): boolean {
  try {
    return leavesReserve(statfsSync(dir), bytes);
  } catch {
    return true;
  }
}

/** {@link roomForSync} without blocking the event loop. */
export async function roomFor(dir: string, bytes: number): Promise<boolean> {
  try {
    return leavesReserve(await statfs(dir), bytes);
  } catch {
    return true;
  }
}
