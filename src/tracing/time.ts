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

/** `t` in milliseconds; NaN when it is not a [seconds, nanoseconds] pair. */
export function hrTimeToMs(t: HrTime | undefined): number {
  return t !== undefined && t.length === 2 ? t[0] * 1e3 + t[1] / 1e6 : Number.NaN;
}
