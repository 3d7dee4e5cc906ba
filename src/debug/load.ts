import { basename, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parseWindowFileName } from '../export/index.js';
import { FlameError, SampleStore } from './model.js';
import { addOtlp } from './read-otlp.js';
import { addPprof } from './read-pprof.js';
import { readSpans } from './spans.js';
import type { SpanRecord } from './spans.js';
import { fs } from '../core/builtins.js';

const { existsSync, readdirSync, readFileSync, statSync } = fs;

export interface Loaded {
  readonly store: SampleStore;
  /** Spans from `spans.jsonl` (and its rotated file) of every folder given. */
  readonly spans: SpanRecord[];
  readonly inputs: readonly string[];
}

export interface LoadOptions {
  /** Called after each file; the CLI prints progress on long reads. */
  readonly onProgress?: (done: number, total: number) => void;
  /** In folders, only window files written and spans ended since then (Unix ms). */
  readonly sinceMs?: number;
}

/**
 * Read window files: folders (every wall `*.pb.gz` and `*.otlp.pb` spanfuse
 * wrote, one per window — pprof preferred when both exist) and single files
 * (gzip or plain pprof from any tool, OTLP requests). Throws FlameError with
 * a one-line message for missing, corrupt, foreign or empty input.
 */
export function loadInputs(paths: readonly string[], opts: LoadOptions = {}): Loaded {
  if (paths.length === 0) throw new FlameError('usage', 'give at least one profile file or output folder');
  const files: { path: string; profileId: string; otlp: boolean }[] = [];
  const spans: SpanRecord[] = [];
  for (const p of paths) {
    if (!existsSync(p)) throw new FlameError('input', `${p}: no such file or folder`);
    if (statSync(p).isDirectory()) {
      const since = opts.sinceMs ?? 0;
      const found = windowFiles(p).filter((f) => since === 0 || statSync(f.path).mtimeMs >= since);
      if (found.length === 0) throw new FlameError('input', `${p}: no spanfuse window files (spanfuse-*.pb.gz, *.otlp.pb) in this folder`);
      files.push(...found);
      spans.push(...readSpans(p).filter((s) => s.endNs >= (opts.sinceMs ?? 0) * 1e6));
    } else {
      const id = parseWindowFileName(basename(p));
      files.push({ path: p, profileId: id?.profileId ?? '', otlp: /\.otlp(\.pb)?(\.gz)?$/.test(p) });
    }
  }
  const store = new SampleStore();
  let done = 0;
  for (const f of files) {
    if (f.profileId !== '' && store.hasWindow(f.profileId)) continue;
    const bytes = readBytes(f.path);
    if (f.otlp) addOtlp(store, bytes, { file: f.path, profileId: f.profileId });
    else {
      const startNs = stampNs(basename(f.path));
      addPprof(store, bytes, { file: f.path, profileId: f.profileId, ...(startNs === undefined ? {} : { startNs }) });
    }
    opts.onProgress?.(++done, files.length);
  }
  if (store.rows.length === 0) {
    throw new FlameError('input', `no samples in ${store.windows.length} window${store.windows.length === 1 ? '' : 's'} (${paths.join(', ')})`);
  }
  return { store, spans, inputs: paths };
}

function windowFiles(dir: string): { path: string; profileId: string; otlp: boolean }[] {
  const pprof = new Map<string, string>();
  const otlp = new Map<string, string>();
  for (const name of readdirSync(dir).sort()) {
    const w = parseWindowFileName(name);
    if (w?.kind === 'wall') pprof.set(w.profileId, join(dir, name));
    else if (w?.kind === 'otlp') otlp.set(w.profileId, join(dir, name));
  }
  const out: { path: string; profileId: string; otlp: boolean; name: string }[] = [];
  for (const [id, path] of pprof) out.push({ path, profileId: id, otlp: false, name: basename(path) });
  for (const [id, path] of otlp) if (!pprof.has(id)) out.push({ path, profileId: id, otlp: true, name: basename(path) });
  // File names start with the window's UTC start: name order is time order.
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Window start from spanfuse's file name (`spanfuse-20261129T221500123Z-...`), Unix ns. */
function stampNs(name: string): number | undefined {
  const m = /^spanfuse-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z-/.exec(name);
  if (m === null) return undefined;
  const [, y, mo, d, h, mi, sec, ms] = m.map(Number) as [number, number, number, number, number, number, number, number];
  return Date.UTC(y, mo - 1, d, h, mi, sec, ms) * 1e6;
}

function readBytes(path: string): Uint8Array {
  let raw: Buffer;
  try {
    raw = readFileSync(path);
  } catch (err) {
    throw new FlameError('input', `${path}: cannot read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  if (raw.length === 0) throw new FlameError('input', `${path}: empty file`);
  if (raw[0] === 0x1f && raw[1] === 0x8b) {
    try {
      return gunzipSync(raw);
    } catch (err) {
      throw new FlameError('input', `${path}: corrupt gzip (${err instanceof Error ? err.message : String(err)})`);
    }
  }
  return raw;
}
