/**
 * The thread-state sampler's results, kept in one SharedArrayBuffer so any
 * thread reads them synchronously with no messages: per OS thread a slot of
 * cumulative counters (nanoseconds) and a small table of cumulative off-CPU
 * time per wait reason. Only the sampler worker writes; values only grow.
 *
 * A wait reason is the syscall number the thread was blocked in and the
 * kernel function it sleeps in (`wchan`, interned in a shared name table).
 * Syscall arguments, stack pointer and program counter are never read.
 */
export const MAX_SLOTS = 256;
export const REASONS_PER_SLOT = 16;
export const MAX_WCHAN_NAMES = 255;
const WCHAN_NAME_BYTES = 48;
const MAGIC = 0x5346_5453; // "SFTS"

/** Per-slot cumulative values (Float64, nanoseconds). */
export const F_OFFCPU = 0;
export const F_FUTEX = 1;
/** schedstat, read only for JS threads (main, workers). */
export const F_RUNQUEUE = 2;
export const F_ONCPU = 3;
/** /proc status and stat, read only for JS threads (main, workers); NaN elsewhere. */
export const F_VCSW = 4;
export const F_IVCSW = 5;
export const F_FAULTS = 6;
const FIELDS = 7;

/** Header cells (Int32). H_STOP: set to 1 (and notified) to stop the sampler. */
export const H_STOP = 6;
export const H_MAGIC = 0;
export const H_WCHAN_COUNT = 1;
export const H_TICKS = 2;
export const H_WORKER_TID = 3;
export const H_INTERVAL_MICROS = 4;
export const H_ERRORS = 5;
const HEADER_CELLS = 8;

/** Reason key for "other reasons" once a slot's reason table is full. */
export const REASON_OVERFLOW = -1;

export interface StateViews {
  readonly sab: SharedArrayBuffer;
  readonly header: Int32Array;
  readonly slotTid: Int32Array;
  readonly values: Float64Array;
  readonly reasonKey: Int32Array;
  readonly reasonNs: Float64Array;
  readonly wchanNames: Uint8Array;
}

function layout(sab: SharedArrayBuffer): StateViews {
  let off = 0;
  const header = new Int32Array(sab, off, HEADER_CELLS);
  off += HEADER_CELLS * 4;
  const slotTid = new Int32Array(sab, off, MAX_SLOTS);
  off += MAX_SLOTS * 4;
  const reasonKey = new Int32Array(sab, off, MAX_SLOTS * REASONS_PER_SLOT);
  off += MAX_SLOTS * REASONS_PER_SLOT * 4;
  const values = new Float64Array(sab, off, MAX_SLOTS * FIELDS);
  off += MAX_SLOTS * FIELDS * 8;
  const reasonNs = new Float64Array(sab, off, MAX_SLOTS * REASONS_PER_SLOT);
  off += MAX_SLOTS * REASONS_PER_SLOT * 8;
  const wchanNames = new Uint8Array(sab, off, MAX_WCHAN_NAMES * WCHAN_NAME_BYTES);
  return { sab, header, slotTid, values, reasonKey, reasonNs, wchanNames };
}

const BYTES =
  HEADER_CELLS * 4 +
  MAX_SLOTS * 4 +
  MAX_SLOTS * REASONS_PER_SLOT * 4 +
  MAX_SLOTS * FIELDS * 8 +
  MAX_SLOTS * REASONS_PER_SLOT * 8 +
  MAX_WCHAN_NAMES * WCHAN_NAME_BYTES;

export function createStateViews(intervalMicros: number): StateViews {
  const v = layout(new SharedArrayBuffer(BYTES));
  v.header[H_INTERVAL_MICROS] = intervalMicros;
  Atomics.store(v.header, H_MAGIC, MAGIC);
  return v;
}

export function attachStateViews(sab: SharedArrayBuffer): StateViews | undefined {
  if (sab.byteLength !== BYTES) return undefined;
  const v = layout(sab);
  return Atomics.load(v.header, H_MAGIC) === MAGIC ? v : undefined;
}

export function valueIndex(slot: number, field: number): number {
  return slot * FIELDS + field;
}

/** Pseudo syscall numbers of a wait reason. */
export const NR_NOT_IN_SYSCALL = -1;
/** Off-CPU between two passes while running at both: waits too short to see. */
export const NR_SHORT_WAITS = -2;

/**
 * Off-CPU of a thread that was running at both passes and made no voluntary
 * switch in between, held for over a second: not waiting but not running
 * either (hypervisor steal, or run-queue time the kernel had not accounted yet).
 */
export const NR_NOT_SCHEDULED = -3;

/**
 * Off-CPU of the thread that runs the sampling passes itself (the main thread
 * with `threadStateHost: 'main'`): measured, but its reason cannot be, since a
 * thread only ever sees itself running. Its futex time is NaN (unknown).
 */
export const NR_UNOBSERVED = -4;

/** Added to a (pseudo) syscall number in a reason key, so every key is positive. */
const NR_BIAS = 8;

/** Encode (syscall number or a pseudo number above; wchan id) as a positive key; 0 is "empty". */
export function reasonKeyOf(syscallNr: number, wchanId: number): number {
  return ((syscallNr + NR_BIAS) << 8) | (wchanId & 0xff);
}

export function decodeReasonKey(key: number): { syscallNr: number; wchanId: number } {
  return { syscallNr: (key >> 8) - NR_BIAS, wchanId: key & 0xff };
}

/** Writer side: store a wchan name, returning its id (0 = unknown). */
export function internWchan(v: StateViews, cache: Map<string, number>, name: string): number {
  const known = cache.get(name);
  if (known !== undefined) return known;
  const count = Atomics.load(v.header, H_WCHAN_COUNT);
  if (count >= MAX_WCHAN_NAMES) return 0;
  const bytes = Buffer.from(name.slice(0, WCHAN_NAME_BYTES - 1), 'latin1');
  v.wchanNames.set(bytes, count * WCHAN_NAME_BYTES);
  const id = count + 1;
  // Publish the name before its id becomes visible.
  Atomics.store(v.header, H_WCHAN_COUNT, id);
  cache.set(name, id);
  return id;
}

/** Reader side: the name of wchan id `id` (1-based), or undefined. */
export function wchanName(v: StateViews, id: number): string | undefined {
  if (id <= 0 || id > Atomics.load(v.header, H_WCHAN_COUNT)) return undefined;
  const start = (id - 1) * WCHAN_NAME_BYTES;
  const raw = v.wchanNames.subarray(start, start + WCHAN_NAME_BYTES);
  const end = raw.indexOf(0);
  return Buffer.from(raw.subarray(0, end < 0 ? raw.length : end)).toString('latin1');
}

/** Reader side: slot index of `tid`, or -1. `hint` is a previous answer. */
export function findSlot(v: StateViews, tid: number, hint = -1): number {
  if (hint >= 0 && hint < MAX_SLOTS && Atomics.load(v.slotTid, hint) === tid) return hint;
  for (let i = 0; i < MAX_SLOTS; i++) if (Atomics.load(v.slotTid, i) === tid) return i;
  return -1;
}
