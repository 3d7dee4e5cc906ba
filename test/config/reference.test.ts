// One configuration reference, tested against the code: every options table
// of docs/configuration.md and of the README (header "option | env |
// default") must name options, environment variables and defaults that the
// code has, and every environment variable the code reads must be documented.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { resolveConfig } from '../../src/config/index.js';
import type { ResolvedConfig, SpanfuseOptions } from '../../src/config/index.js';
import { ROOT } from '../support/child.js';

interface Row {
  readonly source: string;
  readonly option: string | undefined;
  readonly envs: string[];
  readonly defaultCell: string;
  readonly exampleCell: string | undefined;
}

/** Backticked tokens of a cell. */
const ticks = (cell: string): string[] => [...cell.matchAll(/`([^`]*)`/g)].map((m) => m[1] ?? '');

/** Every table whose header starts with `option | env | default`, as rows. */
function tables(file: string): Row[] {
  const rows: Row[] = [];
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const header = cells(lines[i] ?? '');
    if (header.length < 3 || !/^option\b/.test(header[0] ?? '') || header[1] !== 'env' || header[2] !== 'default') continue;
    // "option (`tail.`)": a prefix for every option of the table.
    const prefix = ticks(header[0] ?? '')[0] ?? '';
    const exampleCol = header.indexOf('example');
    for (i += 2; i < lines.length && (lines[i] ?? '').startsWith('|'); i++) {
      const c = cells(lines[i] ?? '');
      const opt = ticks(c[0] ?? '')[0];
      rows.push({
        source: `${file}: ${lines[i]}`,
        option: opt === undefined ? undefined : prefix + opt,
        envs: ticks(c[1] ?? '').filter((e) => /^[A-Z][A-Z0-9_]+$/.test(e)),
        defaultCell: c[2] ?? '',
        exampleCell: exampleCol >= 0 ? c[exampleCol] : undefined,
      });
    }
  }
  return rows;
}

function cells(line: string): string[] {
  if (!line.startsWith('|')) return [];
  return line.split('|').slice(1, -1).map((c) => c.trim());
}

/** Environment variables the code reads: string literals in src/config and in every file that reads the environment. */
function envVarsInCode(): Set<string> {
  const out = new Set<string>();
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
  for (const file of walk(join(ROOT, 'src'))) {
    const text = readFileSync(file, 'utf8');
    const readsEnv = file.includes(`${join('src', 'config')}`) || /process\.env|readEnv\(/.test(text);
    if (!readsEnv) continue;
    // Quoted string literals only (backticks in comments name things, not reads).
    for (const m of text.matchAll(/(['"])((?:SPANFUSE|OTEL)_[A-Z0-9_]+|UV_THREADPOOL_SIZE)\1/g)) out.add(m[2] ?? '');
  }
  return out;
}

/** Where an option's resolved value lives when it is not at the same path. */
const RESOLVED: Record<string, (c: ResolvedConfig) => unknown> = {
  'export.otlp.endpoint': (c) => c.export.otlp.url.href.replace(/\/v1development\/profiles$/, ''),
  'export.otlp.url': (c) => c.export.otlp.url.href,
  'export.pyroscope.url': (c) => c.export.pyroscope.url.href,
  'export.pyroscope.authToken': (c) => (c.export.pyroscope.auth.kind === 'bearer' ? c.export.pyroscope.auth.token : undefined),
  'export.pyroscope.basicAuthUser': (c) => (c.export.pyroscope.auth.kind === 'basic' ? c.export.pyroscope.auth.user : undefined),
  'export.pyroscope.basicAuthPassword': (c) => (c.export.pyroscope.auth.kind === 'basic' ? c.export.pyroscope.auth.password : undefined),
  'tail.quantile': (c) => c.tail.rule.quantileLabel,
  'tail.thresholdMs': (c) => c.tail.rule.budgetMs,
  'tail.operations': (c) => (c.tail.overrides.size === 0 ? undefined : c.tail.overrides),
  'export.scrub.rules': (c) => (c.export.scrub.rules.length === 0 ? undefined : c.export.scrub.rules),
};

/** Defaults the reference describes in words ("— (the working directory)"): their value in the code. */
const IN_WORDS: Record<string, () => unknown> = {
  'export.otlp.url': () => 'http://localhost:4318/v1development/profiles',
  'export.scrub.appRoot': () => process.cwd(),
  // No endpoint: the resolved config carries port 0 with enabled=false.
  'debug.port': () => 0,
};

function resolvedValue(c: ResolvedConfig, option: string): unknown {
  const special = RESOLVED[option];
  if (special !== undefined) return special(c);
  let v: unknown = c;
  for (const part of option.split('.')) {
    assert.ok(v !== null && typeof v === 'object' && part in v, `option ${option}: no ${part} in the resolved configuration`);
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

/** A documented value (env form) as the type the code resolves it to. */
function typed(text: string, like: unknown): unknown {
  if (like instanceof URL || /^https?:\/\//.test(text)) return new URL(text).href.replace(/\/$/, text.endsWith('/') ? '/' : '');
  if (Array.isArray(like)) return text.split(',').map((s) => s.trim());
  if (typeof like === 'boolean' || text === 'true' || text === 'false') return text === 'true';
  if (typeof like === 'number' || /^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  if (/^[\w.-]+=/.test(text)) return Object.fromEntries(text.split(',').map((kv) => kv.split('=') as [string, string]));
  return text;
}

/** The literal default of a cell: its first backticked token; undefined for "—" (no value, or one described in words). */
function defaultOf(cell: string): string | undefined {
  if (cell.startsWith('—') || cell === '') return undefined;
  const t = ticks(cell)[0];
  assert.ok(t !== undefined, `default ${JSON.stringify(cell)} is neither a \`literal\` nor "— (words)"`);
  return t;
}

function isEmpty(v: unknown): boolean {
  return v === undefined || (Array.isArray(v) && v.length === 0) || (v !== null && typeof v === 'object' && !(v instanceof URL) && Object.keys(v).length === 0);
}

function setPath(path: string, value: unknown): SpanfuseOptions {
  const root: Record<string, unknown> = {};
  let o = root;
  const parts = path.split('.');
  for (const p of parts.slice(0, -1)) o = (o[p] = {});
  o[parts.at(-1) ?? ''] = value;
  return root;
}

const docs = tables('docs/configuration.md');
const readme = tables('README.md');
const defaults = resolveConfig({}, {});

void test('the reference and the README have options tables', () => {
  assert.ok(docs.length >= 60, `docs/configuration.md: ${docs.length} rows`);
  assert.ok(readme.length >= 10, `README.md: ${readme.length} rows`);
});

void test('every environment variable the code reads is documented in docs/configuration.md, and every documented one is read', () => {
  const code = envVarsInCode();
  const documented = new Set(docs.flatMap((r) => r.envs));
  assert.deepEqual([...code].filter((e) => !documented.has(e)).sort(), [], 'read by the code, not documented');
  const readmeEnvs = new Set(readme.flatMap((r) => r.envs));
  assert.deepEqual([...documented, ...readmeEnvs].filter((e) => !code.has(e)).sort(), [], 'documented, not read by the code');
});

void test('every documented default is the default of the code', () => {
  for (const r of [...docs, ...readme]) {
    if (r.option === undefined) continue;
    const actual = resolvedValue(defaults, r.option);
    const cell = defaultOf(r.defaultCell);
    if (cell === undefined) {
      const words = IN_WORDS[r.option];
      if (words !== undefined) {
        assert.deepEqual(actual, words(), r.source);
        continue;
      }
      assert.ok(isEmpty(actual), `${r.source}\n  documented without a value, the code defaults to ${JSON.stringify(actual)}`);
      continue;
    }
    assert.deepEqual(actual instanceof URL ? actual.href : actual, typed(cell, actual), r.source);
  }
});

void test('every documented env variable sets its documented option, and the option in code sets the same value', () => {
  let checked = 0;
  for (const r of docs) {
    if (r.option === undefined) continue;
    const example = r.exampleCell === undefined ? undefined : ticks(r.exampleCell)[0];
    if (example === undefined) continue;
    const like = resolvedValue(defaults, r.option);
    const want = typed(example, like);
    for (const env of r.envs) {
      // Every exporter selected, so their settings are validated, not ignored.
      const c = resolveConfig({}, { SPANFUSE_EXPORTERS: 'file,otlp,pyroscope', [env]: example });
      assert.deepEqual(c.warnings, [], `${r.source}\n  ${env}=${example} was not accepted`);
      assert.deepEqual(resolvedValue(c, r.option), want, `${r.source}\n  ${env}=${example} did not set ${r.option}`);
      checked++;
    }
    // The same value through the option in code.
    const codeValue = r.option === 'export.otlp.endpoint' || r.option.endsWith('.url') ? example : want;
    const c = resolveConfig(setPath(r.option, codeValue), {});
    assert.deepEqual(resolvedValue(c, r.option), want, `${r.source}\n  option ${r.option}=${JSON.stringify(codeValue)} in code did not take`);
    checked++;
  }
  assert.ok(checked >= 50, `only ${checked} checks`);
});

void test('README tables agree with docs/configuration.md', () => {
  for (const r of readme) {
    if (r.option === undefined) continue;
    const d = docs.find((x) => x.option === r.option);
    assert.ok(d !== undefined, `${r.source}\n  not in docs/configuration.md`);
    assert.deepEqual(r.envs.filter((e) => !d.envs.includes(e)), [], `${r.source}\n  env differs from docs: ${d.envs.join(', ')}`);
    assert.ok(r.envs.length > 0 || d.envs.length === 0, `${r.source}\n  docs name ${d.envs.join(', ')}`);
    assert.equal(defaultOf(r.defaultCell), defaultOf(d.defaultCell), `${r.source}\n  default differs from docs: ${d.defaultCell}`);
  }
});
