/**
 * `struct perf_event_attr` (linux/include/uapi/linux/perf_event.h), encoded
 * by hand at PERF_ATTR_SIZE_VER7 (128 bytes), little-endian (x86_64, arm64).
 */
export const PERF_ATTR_SIZE = 128;

export const PERF_TYPE_HARDWARE = 0;
export const PERF_TYPE_SOFTWARE = 1;
export const PERF_TYPE_HW_CACHE = 3;

export const PERF_COUNT_HW_CPU_CYCLES = 0;
export const PERF_COUNT_HW_INSTRUCTIONS = 1;
export const PERF_COUNT_HW_CACHE_MISSES = 3;

export const PERF_COUNT_SW_CPU_CLOCK = 0;
export const PERF_COUNT_SW_TASK_CLOCK = 1;
export const PERF_COUNT_SW_PAGE_FAULTS = 2;
export const PERF_COUNT_SW_CONTEXT_SWITCHES = 3;

/** LLC read misses: cache id LL (2) | op READ (0) << 8 | result MISS (1) << 16. */
export const PERF_HW_CACHE_LL_READ_MISS = 2 | (0 << 8) | (1 << 16);

export const PERF_FORMAT_TOTAL_TIME_ENABLED = 1n << 0n;
export const PERF_FORMAT_TOTAL_TIME_RUNNING = 1n << 1n;
export const PERF_FORMAT_ID = 1n << 2n;
export const PERF_FORMAT_GROUP = 1n << 3n;

/** Bits of the flags word at offset 40. */
export const ATTR_DISABLED = 1n << 0n;
export const ATTR_INHERIT = 1n << 1n;
export const ATTR_EXCLUDE_KERNEL = 1n << 5n;
export const ATTR_EXCLUDE_HV = 1n << 6n;

/** Field offsets in the struct. */
export const OFF_TYPE = 0;
export const OFF_SIZE = 4;
export const OFF_CONFIG = 8;
export const OFF_SAMPLE_PERIOD = 16;
export const OFF_SAMPLE_TYPE = 24;
export const OFF_READ_FORMAT = 32;
export const OFF_FLAGS = 40;
export const OFF_WAKEUP_EVENTS = 48;
export const OFF_BP_TYPE = 52;
export const OFF_CONFIG1 = 56;
export const OFF_CONFIG2 = 64;

export interface PerfAttrInput {
  readonly type: number;
  readonly config: number | bigint;
  readonly readFormat?: bigint;
  readonly disabled?: boolean;
  readonly excludeKernel?: boolean;
  readonly excludeHv?: boolean;
}

/** Counting (not sampling) attr; inherit is always 0 so counts are per thread. */
export function encodePerfAttr(input: PerfAttrInput): Uint8Array {
  const buf = new Uint8Array(PERF_ATTR_SIZE);
  const dv = new DataView(buf.buffer);
  dv.setUint32(OFF_TYPE, input.type, true);
  dv.setUint32(OFF_SIZE, PERF_ATTR_SIZE, true);
  dv.setBigUint64(OFF_CONFIG, BigInt(input.config), true);
  dv.setBigUint64(OFF_READ_FORMAT, input.readFormat ?? 0n, true);
  let flags = 0n;
  if (input.disabled === true) flags |= ATTR_DISABLED;
  if (input.excludeKernel === true) flags |= ATTR_EXCLUDE_KERNEL;
  if (input.excludeHv === true) flags |= ATTR_EXCLUDE_HV;
  dv.setBigUint64(OFF_FLAGS, flags, true);
  return buf;
}
