import { time } from '../core/dd-pprof.js';
import { loadLibc } from './ffi.js';
import { procThreadSelfTid } from '../core/proc-tid.js';

/**
 * OS thread id (Linux tid) of the calling thread: @datadog/pprof's native
 * helper, else gettid through koffi, else the /proc/thread-self link. 0 when
 * none works (non-Linux without the addon).
 */
export function currentTid(): number {
  try {
    const tid: unknown = (time.getNativeThreadId as () => unknown)();
    if (typeof tid === 'number' && tid > 0) return tid;
  } catch {
    // fall through to the next source
  }
  const libc = loadLibc();
  if (libc.ok) {
    const tid = libc.libc.gettid();
    if (tid > 0) return tid;
  }
  return procThreadSelfTid();
}
