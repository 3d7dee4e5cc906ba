import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Profile } from '../../src/core/pprof.js';
import { parseWindowFileName } from '../../src/export/index.js';

export interface DecodedSample {
  /** Function names, leaf first. */
  readonly frames: string[];
  /** The file name of each of `frames`. */
  readonly files: string[];
  readonly labels: Record<string, string | bigint>;
  readonly values: number[];
}

export interface DecodedProfile {
  readonly sampleTypes: string[];
  readonly samples: DecodedSample[];
  readonly profile: Profile;
}

/** Decode a gzip pprof file with pprof-format and resolve names and labels. */
export function readPprof(path: string): DecodedProfile {
  return decodePprof(gunzipSync(readFileSync(path)));
}

export function decodePprof(bytes: Uint8Array): DecodedProfile {
  const p = Profile.decode(bytes);
  const str = (i: number | bigint): string => p.stringTable.strings[Number(i)] ?? '';
  const fnName = new Map<string, string>();
  const fnFile = new Map<string, string>();
  for (const f of p.function) {
    fnName.set(String(f.id), str(f.name));
    fnFile.set(String(f.id), str(f.filename));
  }
  const locFrames = new Map<string, string[]>();
  const locFiles = new Map<string, string[]>();
  for (const l of p.location) {
    locFrames.set(String(l.id), l.line.map((ln) => fnName.get(String(ln.functionId)) ?? '?'));
    locFiles.set(String(l.id), l.line.map((ln) => fnFile.get(String(ln.functionId)) ?? ''));
  }
  const samples = p.sample.map((s) => {
    const frames: string[] = [];
    const files: string[] = [];
    for (const id of s.locationId) {
      frames.push(...(locFrames.get(String(id)) ?? []));
      files.push(...(locFiles.get(String(id)) ?? []));
    }
    const labels: Record<string, string | bigint> = {};
    for (const l of s.label) labels[str(l.key)] = Number(l.str) !== 0 ? str(l.str) : BigInt(l.num);
    return { frames, files, labels, values: s.value.map(Number) };
  });
  return { sampleTypes: p.sampleType.map((t) => str(t.type)), samples, profile: p };
}

/** Every wall profile (`*.pb.gz` without a `.heap`/`.offcpu` kind) in `dir`, oldest first. */
export function wallFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => parseWindowFileName(f)?.kind === 'wall')
    .sort()
    .map((f) => join(dir, f));
}

/**
 * Sample counts (each sample's first value) per `thread.id` label, of the
 * samples whose stack includes `frame`, over every wall profile in `dir`.
 */
export function samplesPerThread(dir: string, frame: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const f of wallFiles(dir)) {
    for (const s of readPprof(f).samples) {
      if (!s.frames.includes(frame)) continue;
      const tid = String(s.labels['thread.id']);
      out.set(tid, (out.get(tid) ?? 0) + (s.values[0] ?? 0));
    }
  }
  return out;
}
