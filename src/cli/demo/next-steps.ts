import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Profile } from '../../core/pprof.js';
import { parseWindowFileName } from '../../export/index.js';
import { readSpans } from '../../debug/index.js';

/** A tail span of this run, as read back from the span files. */
export interface TailExample {
  readonly name: string;
  readonly spanId: string;
  readonly profileId: string;
  readonly wallMs: number | undefined;
}

/** Tail spans (`profiler.tail=true`) started at or after `sinceMs`, from `spans.1.jsonl` and `spans.jsonl`. */
export function readTailSpans(dir: string, sinceMs: number): TailExample[] {
  const sinceNs = Math.floor(sinceMs) * 1e6;
  const out: TailExample[] = [];
  for (const s of readSpans(dir)) {
    const a = s.attributes;
    if (a['profiler.tail'] !== true || !(s.startNs >= sinceNs)) continue;
    const id = a['profiler.exemplar.id'];
    if (typeof id !== 'string') continue;
    out.push({ name: s.name, spanId: s.spanId, profileId: id, wallMs: s.endNs > 0 && s.startNs > 0 ? (s.endNs - s.startNs) / 1e6 : undefined });
  }
  return out;
}

/** Values of one string label over the samples of a gzip pprof file, most samples first. */
export function labelValues(path: string, key: string): string[] {
  let p: Profile;
  try {
    p = Profile.decode(gunzipSync(readFileSync(path)));
  } catch {
    return [];
  }
  const strings = p.stringTable.strings;
  const k = strings.indexOf(key);
  if (k <= 0) return [];
  const counts = new Map<string, number>();
  for (const s of p.sample) {
    for (const l of s.label) {
      if (Number(l.key) !== k) continue;
      const v = strings[Number(l.str)] ?? '';
      counts.set(v, (counts.get(v) ?? 0) + Number(s.value[0] ?? 1));
    }
  }
  return [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([v]) => v);
}

/** The wall/CPU pprof file of a window, if it is in `dir`. */
export function wallFileOf(dir: string, profileId: string): string | undefined {
  const f = readdirSync(dir).find((n) => {
    const p = parseWindowFileName(n);
    return p?.kind === 'wall' && p.profileId === profileId;
  });
  return f === undefined ? undefined : join(dir, f);
}

/** A `-tagfocus` value for the most sampled span name of `file`, if any sample has one. */
function spanNameFocus(file: string): string | undefined {
  const name = labelValues(file, 'span_name')[0];
  return name === undefined ? undefined : `span_name=${goRegexpEscape(name)}`;
}

/** RE2 (Go regexp) escape: `-tagfocus` values are regular expressions. */
export function goRegexpEscape(s: string): string {
  return s.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
}

/** One shell word, single-quoted when needed. */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The closing "next steps" of the demo: where the tail spans are, `go tool
 * pprof` commands that work on this run's files (a `-tagfocus` value taken
 * from the profile itself), and how to profile one's own app.
 */
export function nextSteps(dir: string, sinceMs: number, cwd = process.cwd()): string {
  const rel = (p: string): string => {
    const r = relative(cwd, p);
    return r.startsWith('..') || r === '' ? p : r;
  };
  const tails = readTailSpans(dir, sinceMs);
  const lines = ['', 'next steps:'];
  // Prefer the slowest tail span whose window file is on disk.
  const withFile = tails
    .map((t) => ({ t, file: wallFileOf(dir, t.profileId) }))
    .filter((x): x is { t: TailExample; file: string } => x.file !== undefined)
    .sort((a, b) => (b.t.wallMs ?? 0) - (a.t.wallMs ?? 0));
  let file: string | undefined;
  let focus: string | undefined;
  const spansPath = rel(join(dir, 'spans.jsonl'));
  if (withFile[0] !== undefined) {
    const { t } = withFile[0];
    file = withFile[0].file;
    const ops = labelValues(file, 'profiler.tail.operation');
    // The example's own operation when its samples are labelled, else the
    // most sampled one; when no tail span of that window was sampled (a short
    // run, a loaded machine), its most sampled span name.
    const op = ops.find((o) => o.startsWith(`${t.name} `)) ?? ops[0];
    focus = op !== undefined ? `profiler.tail.operation=${goRegexpEscape(op)}` : spanNameFocus(file);
    lines.push(
      `  tail spans:  ${tails.length} in ${spansPath} (attribute profiler.tail=true); the slowest:`,
      `               ${t.name} span ${t.spanId}${t.wallMs !== undefined ? `, ${t.wallMs.toFixed(1)} ms` : ''}, profiler.exemplar.id ${t.profileId}`,
      `               grep ${t.profileId} ${spansPath}   # every tail span of that window`,
    );
  } else {
    lines.push(`  tail spans:  none in ${spansPath} this run (each operation needs 100 spans before its tail is known; run longer)`);
    const walls = readdirSync(dir)
      .filter((n) => parseWindowFileName(n)?.kind === 'wall')
      .sort();
    const last = walls.at(-1);
    if (last !== undefined) {
      file = join(dir, last);
      focus = spanNameFocus(file);
    }
  }
  if (file !== undefined) {
    const f = shellQuote(rel(file));
    lines.push(
      '  look at the profile (Go toolchain):',
      `    go tool pprof -top ${f}`,
      ...(focus !== undefined ? [`    go tool pprof -top ${shellQuote(`-tagfocus=${focus}`)} ${f}`] : []),
      `    go tool pprof -tags ${f}            # every label: trace_id, span_id, span_name ...`,
      `    go tool pprof -http=127.0.0.1:8080 ${f}   # flame graph in the browser`,
    );
  }
  lines.push(
    '  profile your own app:',
    '    npm install spanfuse',
    '    node --import spanfuse/register app.js     # output in ./spanfuse-out (SPANFUSE_OUTPUT_DIR)',
    '    npx spanfuse summary ./spanfuse-out',
    '  (README: "Profiling your service"; with your own tracer provider, add sf.spanProcessor())',
  );
  return lines.join('\n');
}
