/**
 * Names of the files the file exporter writes:
 * `spanfuse-20261129T221500123Z-<profileId>[.heap|.offcpu].pb.gz` and
 * `...-<profileId>.otlp.pb`. The UTC start time first makes a plain name sort
 * a time sort; the profile id makes a span's `profiler.exemplar.id` greppable.
 */
export type FileKind = 'wall' | 'heap' | 'offcpu' | 'otlp';

const PATTERN = /^spanfuse-(\d{8}T\d{9}Z)-([0-9a-f]{32})(\.heap|\.offcpu)?\.(pb\.gz|otlp\.pb)$/;

export function windowFileName(startUnixNs: bigint, profileId: string, kind: FileKind): string {
  const ms = Number(startUnixNs / 1_000_000n);
  const stamp = new Date(ms).toISOString().replace(/[-:.]/g, '');
  // 20261129T221500123Z: date, time and milliseconds, fixed width.
  const suffix = kind === 'otlp' ? '.otlp.pb' : kind === 'wall' ? '.pb.gz' : `.${kind}.pb.gz`;
  return `spanfuse-${stamp}-${profileId}${suffix}`;
}

/** Profile id and kind of a file we wrote, or undefined for any other file. */
export function parseWindowFileName(name: string): { profileId: string; kind: FileKind } | undefined {
  const m = PATTERN.exec(name);
  if (m === null || m[2] === undefined) return undefined;
  const kind: FileKind = m[4] === 'otlp.pb' ? 'otlp' : m[3] === '.heap' ? 'heap' : m[3] === '.offcpu' ? 'offcpu' : 'wall';
  return { profileId: m[2], kind };
}

export const TEMP_PREFIX = '.spanfuse-tmp-';
