import type { ConfigProblem } from '../core/errors.js';

/** A snapshot of environment variables. Only `readEnv()` touches `process.env`. */
export type EnvSource = Readonly<Record<string, string | undefined>>;

/** The one place spanfuse reads `process.env`. */
export function readEnv(): EnvSource {
  return { ...process.env };
}

/**
 * Collects problems across every config section so validation can report all
 * of them in one error. Section parsers take a `Problems` and never throw.
 */
export class Problems {
  readonly list: ConfigProblem[] = [];
  /** Settings that were ignored (not in use, or leniently parsed): printed once, never fatal. */
  readonly warnings: ConfigProblem[];

  constructor(warnings: ConfigProblem[] = []) {
    this.warnings = warnings;
  }

  add(field: string, message: string): void {
    this.list.push({ field, message });
  }

  warn(field: string, message: string): void {
    this.warnings.push({ field, message });
  }

  /** A view whose problems become warnings (the value is ignored, the default used). */
  lenient(note: string): Problems {
    return new LenientProblems(this.warnings, note);
  }
}

/** Problems that only warn: shares the warnings list of the Problems it came from. */
class LenientProblems extends Problems {
  readonly #note: string;
  constructor(warnings: ConfigProblem[], note: string) {
    super(warnings);
    this.#note = note;
  }
  override add(field: string, message: string): void {
    this.warn(field, `${message}; ${this.#note}`);
  }
}

/** Trimmed value of an env var; `undefined` when unset or blank. */
export function envString(env: EnvSource, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined) return undefined;
  const v = raw.trim();
  return v === '' ? undefined : v;
}

export function envInt(
  env: EnvSource,
  name: string,
  problems: Problems,
  bounds: { min: number; max: number },
): number | undefined {
  const v = envString(env, name);
  if (v === undefined) return undefined;
  const n = /^[+-]?\d+$/.test(v) ? Number(v) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < bounds.min || n > bounds.max) {
    problems.add(name, `expected a whole number from ${bounds.min} to ${bounds.max}, got ${JSON.stringify(v)}`);
    return undefined;
  }
  return n;
}

export function envNumber(
  env: EnvSource,
  name: string,
  problems: Problems,
  bounds: { min: number; max: number },
): number | undefined {
  const v = envString(env, name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n < bounds.min || n > bounds.max) {
    problems.add(name, `expected a number from ${bounds.min} to ${bounds.max}, got ${JSON.stringify(v)}`);
    return undefined;
  }
  return n;
}

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['0', 'false', 'no', 'off']);

export function envBool(env: EnvSource, name: string, problems: Problems): boolean | undefined {
  const v = envString(env, name);
  if (v === undefined) return undefined;
  const l = v.toLowerCase();
  if (TRUE.has(l)) return true;
  if (FALSE.has(l)) return false;
  problems.add(name, `expected true or false (also 1/0, yes/no, on/off), got ${JSON.stringify(v)}`);
  return undefined;
}

/** Comma-separated list, trimmed, empty entries removed. */
export function envList(env: EnvSource, name: string): string[] | undefined {
  const v = envString(env, name);
  if (v === undefined) return undefined;
  return v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/**
 * `key1=value1,key2=value2` as used by OTEL_RESOURCE_ATTRIBUTES and
 * OTEL_EXPORTER_OTLP_HEADERS; values are percent-decoded (W3C baggage octets).
 */
export function envKeyValues(env: EnvSource, name: string, problems: Problems): Record<string, string> | undefined {
  const v = envString(env, name);
  if (v === undefined) return undefined;
  const out: Record<string, string> = {};
  const parts = v.split(',');
  for (const [i, part] of parts.entries()) {
    if (part.trim() === '') continue;
    const eq = part.indexOf('=');
    if (eq <= 0) {
      // Entry number only: these variables carry credentials (headers).
      problems.add(name, `expected key=value pairs separated by commas; entry ${i + 1} of ${parts.length} has no "key="`);
      continue;
    }
    const key = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    try {
      value = decodeURIComponent(value);
    } catch {
      problems.add(name, `value of ${JSON.stringify(key)} is not valid percent-encoding`);
      continue;
    }
    out[key] = value;
  }
  return out;
}
