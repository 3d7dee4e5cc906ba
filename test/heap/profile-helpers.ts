import type { Profile } from '../../src/core/index.js';

/** Index of a sample type by name, or -1. */
export function typeIndex(p: Profile, type: string): number {
  return p.sampleType.findIndex((t) => p.stringTable.strings[Number(t.type)] === type);
}

export function typeNames(p: Profile): string[] {
  const s = p.stringTable.strings;
  return p.sampleType.map((t) => `${s[Number(t.type)]}/${s[Number(t.unit)]}`);
}

/** Function names on a sample's stack, leaf first. */
export function stackNames(p: Profile, locationIds: readonly (number | bigint)[]): string[] {
  const fnById = new Map(p.function.map((f) => [Number(f.id), p.stringTable.strings[Number(f.name)] ?? '']));
  const locById = new Map(p.location.map((l) => [Number(l.id), l]));
  return locationIds.map((id) => {
    const line = locById.get(Number(id))?.line[0];
    return line === undefined ? '' : (fnById.get(Number(line.functionId)) ?? '');
  });
}

/** Sum of a sample type over all samples, and over samples whose stack holds `fn`. */
export function sumWhere(p: Profile, type: string, fn?: (names: string[]) => boolean): number {
  const i = typeIndex(p, type);
  if (i < 0) throw new Error(`no sample type ${type}`);
  let total = 0;
  for (const s of p.sample) {
    if (fn !== undefined && !fn(stackNames(p, s.locationId))) continue;
    total += Number(s.value[i] ?? 0);
  }
  return total;
}

/** String label `key` of a sample, if any. */
export function labelOf(p: Profile, sample: Profile['sample'][number], key: string): string | undefined {
  const s = p.stringTable.strings;
  for (const l of sample.label) {
    if (s[Number(l.key)] === key && Number(l.str) !== 0) return s[Number(l.str)];
  }
  return undefined;
}
