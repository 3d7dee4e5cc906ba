/** A parsed quantile: the number and the label written on spans. */
export interface ParsedQuantile {
  readonly quantile: number;
  readonly label: string;
}

const P_FORM = /^p(\d{1,2}(?:\.\d{1,4})?)$/i;

/**
 * Accepts `p99`, `p95`, `p99.9` (a percentile) or a number in (0, 1) such as
 * 0.999. Returns a message naming the accepted forms when the input is bad.
 */
export function parseQuantile(input: string | number): ParsedQuantile | string {
  if (typeof input === 'number') {
    if (!Number.isFinite(input) || input <= 0 || input >= 1) {
      return `expected a quantile strictly between 0 and 1 (e.g. 0.99) or a percentile like "p99", got ${String(input)}`;
    }
    return { quantile: input, label: labelOf(input) };
  }
  const s = input.trim();
  const m = P_FORM.exec(s);
  if (m?.[1] !== undefined) {
    const pct = Number(m[1]);
    if (pct > 0 && pct < 100) return { quantile: Number((pct / 100).toPrecision(12)), label: `p${m[1]}` };
  }
  const n = Number(s);
  if (s !== '' && Number.isFinite(n) && n > 0 && n < 1) return { quantile: n, label: labelOf(n) };
  return `expected "p99", "p95", a percentile like "p99.9", or a quantile strictly between 0 and 1, got ${JSON.stringify(input)}`;
}

function labelOf(q: number): string {
  // 0.999 -> p99.9; rounding hides float noise such as 99.89999999.
  return `p${String(Number((q * 100).toFixed(6)))}`;
}
