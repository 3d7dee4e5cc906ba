import { randomBytes } from 'node:crypto';

/** A fresh 16-byte profile id as 32 lowercase hex characters (OTLP `profile_id`). */
export function newProfileId(): string {
  return randomBytes(16).toString('hex');
}

/** Wall-clock time now in Unix nanoseconds, with sub-millisecond precision. */
export function nowUnixNs(): bigint {
  const ms = performance.timeOrigin + performance.now();
  return BigInt(Math.round(ms * 1e3)) * 1000n;
}
