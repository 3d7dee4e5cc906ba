import { userInfo } from 'node:os';
import type { LaneLimits } from '../export/lane.js';
import type { RetryPolicy } from '../export/retrying-transport.js';
import type { ScrubConfig } from '../profile/scrub-config.js';
import { envInt, envKeyValues, envList, envString } from './env.js';
import type { EnvSource, Problems } from './env.js';

export type ExporterName = 'file' | 'otlp' | 'pyroscope';
export type FileFormatName = 'pprof' | 'otlp';
export type CompressionName = 'gzip' | 'none';

/** Where and how profiles are exported, as given in code (`SpanfuseOptions.export`). */
export interface ExportOptions {
  /** Which exporters run. Env `SPANFUSE_EXPORTERS` (e.g. `file,otlp`). Default `['file']`. */
  exporters?: ExporterName[];
  file?: {
    /** Env `SPANFUSE_FILE_FORMATS` (`pprof,otlp`). Default `['pprof']`. */
    formats?: FileFormatName[];
    /** Env `SPANFUSE_FILE_MAX_FILES`. Default 1000. */
    maxFiles?: number;
    /** Env `SPANFUSE_FILE_MAX_BYTES`. Default 256 MiB. */
    maxBytes?: number;
  };
  otlp?: {
    /**
     * Base URL; `/v1development/profiles` is appended. Env
     * `OTEL_EXPORTER_OTLP_ENDPOINT`. Default `http://localhost:4318`.
     */
    endpoint?: string;
    /** Full profiles URL, used as is. Env `OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT`. */
    url?: string;
    /** Env `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_PROFILES_HEADERS` (merged, code wins). */
    headers?: Record<string, string>;
    /** Per request. Env `OTEL_EXPORTER_OTLP[_PROFILES]_TIMEOUT`. Default 10000. */
    timeoutMs?: number;
    /** Env `OTEL_EXPORTER_OTLP[_PROFILES]_COMPRESSION`. Default `gzip`. */
    compression?: CompressionName;
  };
  pyroscope?: {
    /** Server URL. Env `SPANFUSE_PYROSCOPE_URL`. Default `http://localhost:4040`. */
    url?: string;
    /** Env `SPANFUSE_PYROSCOPE_APP_NAME`. Default: the service name. */
    appName?: string;
    /** Env `SPANFUSE_PYROSCOPE_TAGS` (`k=v,k2=v2`). */
    tags?: Record<string, string>;
    /** Bearer token. Env `SPANFUSE_PYROSCOPE_AUTH_TOKEN`. */
    authToken?: string;
    /** Basic auth. Env `SPANFUSE_PYROSCOPE_BASIC_AUTH_USER` / `_PASSWORD`. */
    basicAuthUser?: string;
    basicAuthPassword?: string;
    /** `X-Scope-OrgID`. Env `SPANFUSE_PYROSCOPE_TENANT_ID`. */
    tenantId?: string;
    /** Env `SPANFUSE_PYROSCOPE_TIMEOUT`. Default 10000. */
    timeoutMs?: number;
  };
  /** Per network exporter queue. Env `SPANFUSE_EXPORT_QUEUE_MAX_ITEMS` / `_MAX_BYTES`. */
  queue?: { maxItems?: number; maxBytes?: number };
  /** Env `SPANFUSE_EXPORT_RETRY_*` (`INITIAL_MS`, `MAX_MS`, `MAX_ELAPSED_MS`, `MAX_ATTEMPTS`). */
  retry?: { maxAttempts?: number; initialBackoffMs?: number; maxBackoffMs?: number; maxElapsedMs?: number };
  scrub?: {
    /** Extra label keys (matched as parts, case/punctuation-insensitive) to redact. Env `SPANFUSE_SCRUB_DENY_KEYS`. */
    denyKeys?: string[];
    /** Label keys never scrubbed. Env `SPANFUSE_SCRUB_ALLOW_KEYS`. */
    allowKeys?: string[];
    /** Extra patterns to redact anywhere (RegExp or source text). */
    rules?: (RegExp | string)[];
    /** Paths under it are made relative. Env `SPANFUSE_APP_ROOT`. Default: the working directory. */
    appRoot?: string;
  };
}

export interface ResolvedExportConfig {
  readonly exporters: readonly ExporterName[];
  readonly file: { readonly formats: readonly FileFormatName[]; readonly maxFiles: number; readonly maxBytes: number };
  readonly otlp: {
    readonly url: URL;
    readonly headers: Readonly<Record<string, string>>;
    readonly timeoutMs: number;
    readonly compression: CompressionName;
  };
  readonly pyroscope: {
    readonly url: URL;
    readonly appName: string | undefined;
    readonly tags: Readonly<Record<string, string>>;
    readonly auth:
      | { readonly kind: 'none' }
      | { readonly kind: 'bearer'; readonly token: string }
      | { readonly kind: 'basic'; readonly user: string; readonly password: string };
    readonly tenantId: string | undefined;
    readonly timeoutMs: number;
  };
  readonly queue: LaneLimits;
  readonly retry: RetryPolicy;
  readonly scrub: ScrubConfig;
}

const MiB = 1024 * 1024;
const EXPORTERS: readonly ExporterName[] = ['file', 'otlp', 'pyroscope'];
const FORMATS: readonly FileFormatName[] = ['pprof', 'otlp'];
const DEFAULT_OTLP = 'http://localhost:4318';
const DEFAULT_PYROSCOPE = 'http://localhost:4040';
export const OTLP_PROFILES_PATH = '/v1development/profiles';
const TIMEOUT = { min: 1, max: 600_000 };
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Merge export options (code > env > default) and validate. Never throws:
 * each problem names its field and the fix; a usable config is returned.
 */
export function resolveExportConfig(options: ExportOptions | undefined, env: EnvSource, problems: Problems): ResolvedExportConfig {
  const o = options ?? {};

  const exporters = names(o.exporters, 'export.exporters', envList(env, 'SPANFUSE_EXPORTERS'), 'SPANFUSE_EXPORTERS', EXPORTERS, ['file'], problems);
  const formats = names(o.file?.formats, 'export.file.formats', envList(env, 'SPANFUSE_FILE_FORMATS'), 'SPANFUSE_FILE_FORMATS', FORMATS, ['pprof'], problems);

  const file = {
    formats,
    maxFiles: int(o.file?.maxFiles, 'export.file.maxFiles', env, 'SPANFUSE_FILE_MAX_FILES', { min: 1, max: 1_000_000 }, 1000, problems),
    maxBytes: int(o.file?.maxBytes, 'export.file.maxBytes', env, 'SPANFUSE_FILE_MAX_BYTES', { min: 64 * 1024, max: 2 ** 50 }, 256 * MiB, problems),
  };

  // Settings of an exporter that is not selected never stop profiling: the
  // shared OTEL_EXPORTER_OTLP_* variables belong to the app's own tracing
  // first. They are checked anyway and reported as one warning.
  const op = exporters.includes('otlp') ? problems : problems.lenient('ignored: the otlp exporter is not selected');
  const pp = exporters.includes('pyroscope') ? problems : problems.lenient('ignored: the pyroscope exporter is not selected');
  // OTLP exporter spec: an OTEL_* value that cannot be parsed is warned about
  // and treated as unset (bad header entries are skipped), not fatal.
  const otelEnv = op === problems ? problems.lenient('ignored (OTLP exporter spec: unparsable values are treated as unset)') : op;

  // OTLP: a full URL (code or PROFILES env) is used as is; a base endpoint gets the profiles path.
  let otlpUrl: URL;
  const specific = envString(env, 'OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT');
  if (o.otlp?.url !== undefined) otlpUrl = url(o.otlp.url, 'export.otlp.url', DEFAULT_OTLP + OTLP_PROFILES_PATH, op);
  else if (o.otlp?.endpoint !== undefined) otlpUrl = withPath(url(o.otlp.endpoint, 'export.otlp.endpoint', DEFAULT_OTLP, op));
  else if (specific !== undefined) otlpUrl = url(specific, 'OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT', DEFAULT_OTLP + OTLP_PROFILES_PATH, op);
  else {
    const base = envString(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
    otlpUrl = withPath(url(base ?? DEFAULT_OTLP, 'OTEL_EXPORTER_OTLP_ENDPOINT', DEFAULT_OTLP, op));
  }
  const protocol = envString(env, 'OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL');
  if (protocol !== undefined && protocol !== 'http/protobuf') {
    op.add('OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL', `spanfuse exports profiles over http/protobuf only; unset it or set it to http/protobuf (got ${JSON.stringify(protocol)})`);
  }
  const headers = {
    ...validHeaders(envKeyValues(env, 'OTEL_EXPORTER_OTLP_HEADERS', otelEnv), 'OTEL_EXPORTER_OTLP_HEADERS', otelEnv),
    ...validHeaders(envKeyValues(env, 'OTEL_EXPORTER_OTLP_PROFILES_HEADERS', otelEnv), 'OTEL_EXPORTER_OTLP_PROFILES_HEADERS', otelEnv),
    ...validHeaders(o.otlp?.headers, 'export.otlp.headers', op),
  };
  const otlpTimeoutEnv = envString(env, 'OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT') !== undefined ? 'OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT' : 'OTEL_EXPORTER_OTLP_TIMEOUT';
  const otlp = {
    url: otlpUrl,
    headers,
    timeoutMs: int(o.otlp?.timeoutMs, 'export.otlp.timeoutMs', env, otlpTimeoutEnv, TIMEOUT, 10_000, op, otelEnv),
    compression: compression(o.otlp?.compression, env, op, otelEnv),
  };

  const p = o.pyroscope ?? {};
  const pyroUrl = url(p.url ?? envString(env, 'SPANFUSE_PYROSCOPE_URL') ?? DEFAULT_PYROSCOPE, p.url !== undefined ? 'export.pyroscope.url' : 'SPANFUSE_PYROSCOPE_URL', DEFAULT_PYROSCOPE, pp);
  const token = p.authToken ?? envString(env, 'SPANFUSE_PYROSCOPE_AUTH_TOKEN');
  const user = p.basicAuthUser ?? envString(env, 'SPANFUSE_PYROSCOPE_BASIC_AUTH_USER');
  const password = p.basicAuthPassword ?? envString(env, 'SPANFUSE_PYROSCOPE_BASIC_AUTH_PASSWORD');
  let auth: ResolvedExportConfig['pyroscope']['auth'] = { kind: 'none' };
  if (token !== undefined && user !== undefined) {
    pp.add('export.pyroscope.authToken', 'set either a bearer token or basic-auth user/password, not both');
  } else if (token !== undefined) auth = { kind: 'bearer', token };
  else if (user !== undefined) {
    if (password === undefined) pp.add('SPANFUSE_PYROSCOPE_BASIC_AUTH_PASSWORD', 'basic auth needs a password too; set it or remove the user');
    auth = { kind: 'basic', user, password: password ?? '' };
  }
  const tags = { ...envKeyValues(env, 'SPANFUSE_PYROSCOPE_TAGS', pp), ...p.tags };
  const pyroscope = {
    url: pyroUrl,
    appName: p.appName ?? envString(env, 'SPANFUSE_PYROSCOPE_APP_NAME'),
    tags,
    auth,
    tenantId: p.tenantId ?? envString(env, 'SPANFUSE_PYROSCOPE_TENANT_ID'),
    timeoutMs: int(p.timeoutMs, 'export.pyroscope.timeoutMs', env, 'SPANFUSE_PYROSCOPE_TIMEOUT', TIMEOUT, 10_000, pp),
  };

  const queue = {
    maxItems: int(o.queue?.maxItems, 'export.queue.maxItems', env, 'SPANFUSE_EXPORT_QUEUE_MAX_ITEMS', { min: 1, max: 10_000 }, 16, problems),
    maxBytes: int(o.queue?.maxBytes, 'export.queue.maxBytes', env, 'SPANFUSE_EXPORT_QUEUE_MAX_BYTES', { min: 64 * 1024, max: 2 ** 40 }, 32 * MiB, problems),
  };
  const r = o.retry ?? {};
  const retry: RetryPolicy = {
    maxAttempts: int(r.maxAttempts, 'export.retry.maxAttempts', env, 'SPANFUSE_EXPORT_RETRY_MAX_ATTEMPTS', { min: 1, max: 1000 }, 12, problems),
    initialBackoffMs: int(r.initialBackoffMs, 'export.retry.initialBackoffMs', env, 'SPANFUSE_EXPORT_RETRY_INITIAL_MS', { min: 1, max: 600_000 }, 1000, problems),
    maxBackoffMs: int(r.maxBackoffMs, 'export.retry.maxBackoffMs', env, 'SPANFUSE_EXPORT_RETRY_MAX_MS', { min: 1, max: 3_600_000 }, 30_000, problems),
    multiplier: 2,
    maxElapsedMs: int(r.maxElapsedMs, 'export.retry.maxElapsedMs', env, 'SPANFUSE_EXPORT_RETRY_MAX_ELAPSED_MS', { min: 0, max: 86_400_000 }, 300_000, problems),
    maxRetryAfterMs: 120_000,
  };

  const s = o.scrub ?? {};
  const rules: RegExp[] = [];
  for (const [i, rule] of (s.rules ?? []).entries()) {
    if (rule instanceof RegExp) rules.push(rule);
    else if (typeof rule === 'string') {
      try {
        rules.push(new RegExp(rule, 'g'));
      } catch (err) {
        problems.add(`export.scrub.rules[${i}]`, `not a valid regular expression (${err instanceof Error ? err.message : String(err)}); fix or remove it`);
      }
    } else problems.add(`export.scrub.rules[${i}]`, 'expected a RegExp or a pattern string');
  }
  let userName: string[] = [];
  try {
    userName = [userInfo().username];
  } catch {
    // no passwd entry (containers with arbitrary uids)
  }
  const scrub: ScrubConfig = {
    denyKeys: s.denyKeys ?? envList(env, 'SPANFUSE_SCRUB_DENY_KEYS') ?? [],
    allowKeys: s.allowKeys ?? envList(env, 'SPANFUSE_SCRUB_ALLOW_KEYS') ?? [],
    rules,
    appRoot: s.appRoot ?? envString(env, 'SPANFUSE_APP_ROOT') ?? process.cwd(),
    userNames: userName,
  };

  return { exporters, file, otlp, pyroscope, queue, retry, scrub };
}

function names<T extends string>(
  code: readonly unknown[] | undefined,
  codeField: string,
  fromEnv: string[] | undefined,
  envField: string,
  allowed: readonly T[],
  fallback: T[],
  problems: Problems,
): T[] {
  const list = code ?? fromEnv;
  if (list === undefined) return fallback;
  const field = code !== undefined ? codeField : envField;
  if (!Array.isArray(list)) {
    problems.add(field, `expected a list of ${allowed.join(', ')}`);
    return fallback;
  }
  if (list.length === 0) {
    // An empty list would run a profiler that writes nothing, silently.
    problems.add(field, `empty list; name at least one of ${allowed.join(', ')} (or unset it for the default ${fallback.join(',')})`);
    return fallback;
  }
  const out: T[] = [];
  for (const n of list as unknown[]) {
    const v: unknown = typeof n === 'string' ? n.trim().toLowerCase() : n;
    if (typeof v === 'string' && (allowed as readonly string[]).includes(v)) {
      if (!out.includes(v as T)) out.push(v as T);
    } else {
      problems.add(field, `unknown name ${JSON.stringify(n)}; use one or more of ${allowed.join(', ')} (comma-separated in env)`);
    }
  }
  return out;
}

function int(
  code: number | undefined,
  codeField: string,
  env: EnvSource,
  envName: string,
  bounds: { min: number; max: number },
  fallback: number,
  problems: Problems,
  envProblems: Problems = problems,
): number {
  if (code !== undefined) {
    if (typeof code === 'number' && Number.isSafeInteger(code) && code >= bounds.min && code <= bounds.max) return code;
    problems.add(codeField, `expected a whole number from ${bounds.min} to ${bounds.max}, got ${String(code)}`);
    return fallback;
  }
  return envInt(env, envName, envProblems, bounds) ?? fallback;
}

function url(value: string, field: string, fallback: string, problems: Problems): URL {
  let u: URL | undefined;
  try {
    u = new URL(value);
  } catch {
    u = undefined;
  }
  if (u === undefined || (u.protocol !== 'http:' && u.protocol !== 'https:') || u.hostname === '') {
    problems.add(field, `expected an http(s) URL such as ${fallback}, got ${JSON.stringify(value)}`);
    return new URL(fallback);
  }
  return u;
}

/** Base endpoint + `/v1development/profiles`, as the OTLP spec builds per-signal URLs. */
function withPath(base: URL): URL {
  const u = new URL(base.href);
  u.pathname = `${u.pathname.replace(/\/+$/, '')}${OTLP_PROFILES_PATH}`;
  return u;
}

function compression(code: CompressionName | undefined, env: EnvSource, problems: Problems, envProblems: Problems): CompressionName {
  const specific = envString(env, 'OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION');
  const field = code !== undefined ? 'export.otlp.compression' : specific !== undefined ? 'OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION' : 'OTEL_EXPORTER_OTLP_COMPRESSION';
  const v = code ?? specific ?? envString(env, 'OTEL_EXPORTER_OTLP_COMPRESSION') ?? 'gzip';
  const l = typeof v === 'string' ? v.toLowerCase() : v;
  if (l === 'gzip' || l === 'none') return l;
  (code !== undefined ? problems : envProblems).add(field, `expected gzip or none, got ${JSON.stringify(v)}`);
  return 'gzip';
}

/** The headers with a valid name and value; each bad one is reported and left out. */
function validHeaders(headers: Record<string, unknown> | undefined, field: string, problems: Problems): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers === undefined) return out;
  if (headers === null || typeof headers !== 'object') {
    problems.add(field, 'expected an object of header names to string values');
    return out;
  }
  for (const [k, v] of Object.entries(headers)) {
    if (!HEADER_NAME.test(k)) problems.add(field, `header name ${JSON.stringify(k)} is not a valid HTTP token; remove spaces and separators`);
    else if (typeof v !== 'string' || /[\r\n\0]/.test(v)) problems.add(field, `value of header ${JSON.stringify(k)} must be a string without line breaks`);
    else out[k] = v;
  }
  return out;
}
