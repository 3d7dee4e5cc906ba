/**
 * Command-line and statistics helpers shared by the single-file benchmarks
 * (eventloop, idle, spans, io).
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, from a compiled file at dist/bench/<name>/<file>.js. */
export function repoRootFrom(moduleUrl: string): string {
  return resolve(dirname(fileURLToPath(moduleUrl)), '..', '..', '..');
}

/** The value after `name` in `args`, or `def`. */
export function option(args: readonly string[], name: string, def: string): string {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] !== undefined ? (args[i + 1] as string) : def;
}

/** Every value given after `name` in `args`, in order (e.g. a repeatable `--node-arg FLAG`). */
export function options(args: readonly string[], name: string): string[] {
  const out: string[] = [];
  args.forEach((a, i) => {
    if (a === name && args[i + 1] !== undefined) out.push(args[i + 1] as string);
  });
  return out;
}

/** Every `flag KEY=VALUE` pair in `args`, in order (a value may contain `=`). */
export function keyValues(args: readonly string[], flag: string): [string, string][] {
  const out: [string, string][] = [];
  args.forEach((a, i) => {
    if (a !== flag) return;
    const [k, ...v] = (args[i + 1] ?? '').split('=');
    if (k) out.push([k, v.join('=')]);
  });
  return out;
}

/** The median (the mean of the middle two for an even count); NaN when empty. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
