import { fs } from './builtins.js';

/**
 * The calling thread's Linux tid from the `/proc/thread-self` link
 * ("<pid>/task/<tid>"), or 0 where there is none (not Linux, no /proc).
 * One readlink; no native module, so any thread may call it at any time.
 */
export function procThreadSelfTid(): number {
  try {
    const link = fs.readlinkSync('/proc/thread-self');
    const tid = Number(link.slice(link.lastIndexOf('/') + 1));
    return Number.isSafeInteger(tid) && tid > 0 ? tid : 0;
  } catch {
    return 0;
  }
}
