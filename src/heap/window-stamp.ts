import type { Profile } from '../core/index.js';

/**
 * Give a heap profile its window (start time, duration) and default sample
 * type, so exporters and `go tool pprof` show the right view first.
 */
export function stampWindow(profile: Profile, startMs: number, endMs: number, defaultType: string): void {
  profile.timeNanos = BigInt(startMs) * 1_000_000n;
  profile.durationNanos = BigInt(Math.max(0, endMs - startMs)) * 1_000_000n;
  profile.defaultSampleType = profile.stringTable.dedup(defaultType);
}
