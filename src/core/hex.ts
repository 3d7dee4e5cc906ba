/**
 * Hex ids (W3C trace and span ids) parsed in JavaScript, char by char: on
 * the span path this is cheaper than `Buffer#write(…, 'hex')` or
 * `parseInt(…, 16)`, which need a flat string (a concatenation or slice
 * made first) and a call into the runtime.
 */

/** Digit value by char code: 0-9 and a-f, then A-F only in {@link ANY_CASE}; -1 otherwise. */
const LOWER = new Int8Array(128).fill(-1);
const ANY_CASE = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i++) LOWER[48 + i] = ANY_CASE[48 + i] = i;
for (let i = 0; i < 6; i++) {
  LOWER[97 + i] = ANY_CASE[97 + i] = 10 + i;
  ANY_CASE[65 + i] = 10 + i;
}

/**
 * Write the bytes of `hex` (an even number of digits) into `out` from `at`.
 * False, with `out` partly written, when a char is not a hex digit, or is
 * upper case with `lowerOnly` (ids kept as bytes come back lower case, so a
 * caller that must give the same string back refuses upper case).
 */
export function hexInto(out: Uint8Array, hex: string, at: number, lowerOnly = false): boolean {
  const digit = lowerOnly ? LOWER : ANY_CASE;
  const n = hex.length;
  if ((n & 1) !== 0) return false;
  for (let i = 0; i < n; i += 2) {
    const hi = digit[hex.charCodeAt(i)] ?? -1;
    const lo = digit[hex.charCodeAt(i + 1)] ?? -1;
    if ((hi | lo) < 0) return false;
    out[at++] = (hi << 4) | lo;
  }
  return true;
}

/** The last 8 digits of `hex` as an unsigned integer; NaN when they are not 8 hex digits. */
export function hexTail32(hex: string): number {
  const n = hex.length;
  if (n < 8) return Number.NaN;
  let v = 0;
  for (let i = n - 8; i < n; i++) {
    const d = ANY_CASE[hex.charCodeAt(i)] ?? -1;
    if (d < 0) return Number.NaN;
    v = v * 16 + d;
  }
  return v;
}
