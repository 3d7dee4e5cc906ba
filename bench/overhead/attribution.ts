/**
 * Attribution correctness: of the samples taken inside a request's uniquely
 * named function (ground truth from the stack), the share whose span label is
 * a span that ran that function (ground truth from the server's record).
 *
 * Samples are weighted by their sample count. A sample inside `req_K` is:
 * - `correct`: its span label is one of the spans recorded for `req_K`;
 * - `wrong`: it carries a span label, but another one;
 * - `unlabelled`: it carries no span label (e.g. the label did not follow an
 *   `await`).
 * The server keeps the last 32 spans per function (131,072 requests); if a
 * run served more, old samples may be judged `wrong` although right, and the
 * result says so (`groundTruthComplete: false`).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import * as zlib from 'node:zlib';
import { Profile } from 'pprof-format';
import { uniqueIndex, uniqueName } from './work.js';

export interface Attribution {
  readonly profiles: number;
  readonly samplesInRequestCode: number;
  readonly correct: number;
  readonly wrong: number;
  readonly unlabelled: number;
  /** correct / samplesInRequestCode, or null when there was nothing to judge. */
  readonly share: number | null;
  readonly groundTruthComplete: boolean;
  readonly note?: string;
}

/** Decompress gzip (and zstd where this Node has it); raw bytes otherwise. */
export function decompress(bytes: Buffer): Buffer | undefined {
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) return gunzipSync(bytes);
  if (bytes.length >= 4 && bytes.readUInt32LE(0) === 0xfd2fb528) {
    const z = (zlib as unknown as { zstdDecompressSync?: (b: Buffer) => Buffer }).zstdDecompressSync;
    return z === undefined ? undefined : z(bytes);
  }
  return bytes;
}

export function decodeProfile(bytes: Buffer): Profile | undefined {
  try {
    const raw = decompress(bytes);
    if (raw === undefined) return undefined;
    return Profile.decode(raw);
  } catch {
    return undefined;
  }
}

/**
 * Every decodable wall pprof under `dir` (spanfuse's file exporter output:
 * `*.pb.gz`; its `.heap.pb.gz` / `.offcpu.pb.gz` siblings and `.otlp.pb`
 * files are not wall profiles and are skipped).
 */
export async function profilesInDir(dir: string): Promise<Profile[]> {
  const out: Profile[] = [];
  let entries: string[];
  try {
    entries = (await readdir(dir, { recursive: true })).map(String);
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!/\.(pb\.gz|pprof)$/.test(e) || /\.(heap|offcpu)\.pb\.gz$/.test(e)) continue;
    let bytes: Buffer;
    try {
      bytes = await readFile(join(dir, e));
    } catch {
      continue; // a folder, or a file removed by retention
    }
    const p = decodeProfile(bytes);
    if (p !== undefined && p.sample.length > 0) out.push(p);
  }
  return out;
}

const HEAP_TYPES = new Set(['space', 'objects', 'inuse_space', 'inuse_objects', 'alloc_space', 'alloc_objects']);

function str(p: Profile, i: number | bigint): string {
  return p.stringTable.strings[Number(i)] ?? '';
}

/** Wall/CPU profiles only; heap profiles carry no span labels by design. */
function isTimeProfile(p: Profile): boolean {
  return !p.sampleType.some((t) => HEAP_TYPES.has(str(p, t.type)));
}

function countIndex(p: Profile): number {
  const i = p.sampleType.findIndex((t) => {
    const type = str(p, t.type);
    return (type === 'sample' || type === 'samples') && str(p, t.unit) === 'count';
  });
  return i >= 0 ? i : 0;
}

/** A label value as 16 lowercase hex digits (string hex, decimal, or number). */
export function normaliseSpanId(v: string | number | bigint): string | undefined {
  try {
    if (typeof v === 'string') {
      if (/^[0-9a-fA-F]{16}$/.test(v)) return v.toLowerCase();
      if (/^[0-9]+$/.test(v)) return BigInt(v).toString(16).padStart(16, '0');
      return undefined;
    }
    return BigInt(v).toString(16).padStart(16, '0');
  } catch {
    return undefined;
  }
}

export function attribute(
  profiles: readonly Profile[],
  labelKey: string,
  truth: Record<string, string[]>,
  groundTruthComplete: boolean,
): Attribution {
  const truthSets = new Map<string, Set<string>>();
  for (const [fn, ids] of Object.entries(truth)) truthSets.set(fn, new Set(ids));
  let used = 0;
  let inReq = 0;
  let correct = 0;
  let wrong = 0;
  let unlabelled = 0;
  for (const p of profiles) {
    if (!isTimeProfile(p)) continue;
    used++;
    const ci = countIndex(p);
    const fnName = new Map<number, string>();
    for (const f of p.function) fnName.set(Number(f.id), str(p, f.name));
    const locFns = new Map<number, string[]>();
    for (const l of p.location) locFns.set(Number(l.id), l.line.map((ln) => fnName.get(Number(ln.functionId)) ?? ''));
    const keyIndex = p.stringTable.strings.indexOf(labelKey);
    for (const s of p.sample) {
      const weight = Number(s.value[ci] ?? 0);
      if (weight <= 0) continue;
      let unique: string | undefined;
      for (const locId of s.locationId) {
        for (const name of locFns.get(Number(locId)) ?? []) {
          const k = uniqueIndex(name);
          if (k >= 0) {
            unique = uniqueName(k);
            break;
          }
        }
        if (unique !== undefined) break;
      }
      if (unique === undefined) continue;
      inReq += weight;
      const label = keyIndex < 0 ? undefined : s.label.find((l) => Number(l.key) === keyIndex);
      let id: string | undefined;
      if (label !== undefined) {
        id = Number(label.str) !== 0 ? normaliseSpanId(str(p, label.str)) : normaliseSpanId(label.num);
      }
      if (id === undefined || id === '0000000000000000') unlabelled += weight;
      else if (truthSets.get(unique)?.has(id) === true) correct += weight;
      else wrong += weight;
    }
  }
  return {
    profiles: used,
    samplesInRequestCode: inReq,
    correct,
    wrong,
    unlabelled,
    share: inReq > 0 ? correct / inReq : null,
    groundTruthComplete,
  };
}
