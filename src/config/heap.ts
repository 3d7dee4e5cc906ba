import { envBool, envInt } from './env.js';
import type { EnvSource, Problems } from './env.js';

/** Heap (memory) profiling options, as given in code. */
export interface HeapOptions {
  /** Run the V8 sampling heap profiler. Env `SPANFUSE_HEAP_ENABLED`. */
  enabled?: boolean;
  /** Average bytes allocated between two samples. Env `SPANFUSE_HEAP_INTERVAL_BYTES`. */
  intervalBytes?: number;
  /** Deepest stack recorded per sample. Env `SPANFUSE_HEAP_STACK_DEPTH`. */
  stackDepth?: number;
  /**
   * Also sample objects that the GC already collected, which gives allocated
   * space/objects per window (what attribution to operations needs) instead of
   * only what is still live. Env `SPANFUSE_HEAP_ALLOCATIONS`.
   */
  allocations?: boolean;
}

/** Resolved heap settings: every field set and validated. */
export interface HeapConfig {
  readonly enabled: boolean;
  readonly intervalBytes: number;
  readonly stackDepth: number;
  readonly allocations: boolean;
}

// Off by default: with the sampler active, Node 24 measured 2-8% more CPU
// (independent of the interval), above the 2% budget; Node 20 was within
// noise. See docs/memory.md "Cost".
export const DEFAULT_HEAP_ENABLED = false;
// 512 KiB: no measurable saving at 1 MiB or 16 MiB, 4x fewer samples than
// 128 KiB, and small routes still get samples within a 60 s window.
export const DEFAULT_HEAP_INTERVAL_BYTES = 512 * 1024;
export const DEFAULT_HEAP_STACK_DEPTH = 64;

const INTERVAL_BOUNDS = { min: 1024, max: 64 * 1024 * 1024 };
const DEPTH_BOUNDS = { min: 1, max: 1024 };

/**
 * Merge heap options (code > env > default) and validate the result. Never
 * throws: problems are added to `problems` and a usable config is returned.
 */
export function resolveHeapConfig(
  options: HeapOptions | undefined,
  env: EnvSource,
  problems: Problems,
): HeapConfig {
  const enabled = options?.enabled ?? envBool(env, 'SPANFUSE_HEAP_ENABLED', problems) ?? DEFAULT_HEAP_ENABLED;
  const intervalBytes =
    options?.intervalBytes ??
    envInt(env, 'SPANFUSE_HEAP_INTERVAL_BYTES', problems, INTERVAL_BOUNDS) ??
    DEFAULT_HEAP_INTERVAL_BYTES;
  const stackDepth =
    options?.stackDepth ?? envInt(env, 'SPANFUSE_HEAP_STACK_DEPTH', problems, DEPTH_BOUNDS) ?? DEFAULT_HEAP_STACK_DEPTH;
  const allocations = options?.allocations ?? envBool(env, 'SPANFUSE_HEAP_ALLOCATIONS', problems) ?? false;

  return {
    enabled: checkBool(enabled, 'heap.enabled', problems, DEFAULT_HEAP_ENABLED),
    intervalBytes: checkInt(intervalBytes, 'heap.intervalBytes', INTERVAL_BOUNDS, problems, DEFAULT_HEAP_INTERVAL_BYTES),
    stackDepth: checkInt(stackDepth, 'heap.stackDepth', DEPTH_BOUNDS, problems, DEFAULT_HEAP_STACK_DEPTH),
    allocations: checkBool(allocations, 'heap.allocations', problems, false),
  };
}

function checkInt(
  value: unknown,
  field: string,
  bounds: { min: number; max: number },
  problems: Problems,
  fallback: number,
): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= bounds.min && value <= bounds.max) {
    return value;
  }
  problems.add(field, `expected a whole number from ${bounds.min} to ${bounds.max}, got ${String(value)}`);
  return fallback;
}

function checkBool(value: unknown, field: string, problems: Problems, fallback: boolean): boolean {
  if (typeof value === 'boolean') return value;
  problems.add(field, `expected true or false, got ${String(value)}`);
  return fallback;
}
