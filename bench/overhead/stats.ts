/** Small statistics for the report: spread over rounds and memory slopes. */

export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly n: number;
}

export function spread(values: readonly number[]): Spread | null {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const mid = Math.floor(v.length / 2);
  const median = v.length % 2 === 1 ? (v[mid] ?? Number.NaN) : ((v[mid - 1] ?? 0) + (v[mid] ?? 0)) / 2;
  return { median, min: v[0] ?? Number.NaN, max: v[v.length - 1] ?? Number.NaN, n: v.length };
}

export function mean(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  let s = 0;
  for (const x of values) s += x;
  return s / values.length;
}

export interface Slope {
  /** Least-squares slope, units of y per unit of x. */
  readonly slope: number;
  /** Standard error of the slope. */
  readonly stderr: number;
  readonly intercept: number;
  readonly n: number;
}

/** Ordinary least squares of y on x. */
export function linearRegression(xs: readonly number[], ys: readonly number[]): Slope | null {
  const n = Math.min(xs.length, ys.length);
  if (n < 3) return null;
  const mx = mean(xs.slice(0, n));
  const my = mean(ys.slice(0, n));
  let sxx = 0;
  let sxy = 0;
  for (let i = 0; i < n; i++) {
    const dx = (xs[i] ?? 0) - mx;
    sxx += dx * dx;
    sxy += dx * ((ys[i] ?? 0) - my);
  }
  if (sxx === 0) return null;
  const slope = sxy / sxx;
  const intercept = my - slope * mx;
  let sse = 0;
  for (let i = 0; i < n; i++) {
    const r = (ys[i] ?? 0) - (intercept + slope * (xs[i] ?? 0));
    sse += r * r;
  }
  const stderr = Math.sqrt(sse / (n - 2) / sxx);
  return { slope, stderr, intercept, n };
}
