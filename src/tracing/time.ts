import type { HrTime } from '@opentelemetry/api';

export function hrTimeToNanos(t: HrTime): bigint {
  return BigInt(t[0]) * 1_000_000_000n + BigInt(t[1]);
}

/** The same value as `hrTimeToNanos(t).toString()`, without bigints. */
export function hrTimeToNanoString(t: HrTime): string {
  const [sec, ns] = t;
  if (!Number.isSafeInteger(sec) || !Number.isSafeInteger(ns) || sec < 0 || ns < 0 || ns >= 1e9) return hrTimeToNanos(t).toString();
  if (sec === 0) return String(ns);
  return String(sec) + String(ns).padStart(9, '0');
}
