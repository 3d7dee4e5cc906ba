import { Function as PFunction, Label, Line, Location, Mapping, Profile, Sample, sampleTimeNs, sampleTimes, StringTable, ValueType } from '../core/pprof.js';
import { LABEL_TIMESTAMP_NS } from '../core/labels.js';

/**
 * Merge wall/CPU window profiles into one, keeping only samples taken in
 * [fromNs, toNs] (by their `end_timestamp_ns` label; a sample without one is
 * kept when its window lies inside the range). Strings, functions,
 * locations and mappings are renumbered into the merged profile.
 */
export function mergeProfiles(parts: readonly Profile[], fromNs: bigint, toNs: bigint, comments: readonly string[] = []): Profile {
  const strings = new StringTable();
  const first = parts[0];
  const fstr = (p: Profile, i: number | bigint): string => p.stringTable.strings[Number(i)] ?? '';
  const typeNames = first === undefined ? ['sample/count', 'wall/nanoseconds'] : first.sampleType.map((t) => `${fstr(first, t.type)}/${fstr(first, t.unit)}`);
  const sampleType = typeNames.map((n) => {
    const [type = '', unit = ''] = n.split('/');
    return new ValueType({ type: strings.dedup(type), unit: strings.dedup(unit) });
  });
  const functions: PFunction[] = [];
  const locations: Location[] = [];
  const mappings: Mapping[] = [];
  const samples: Sample[] = [];
  const fnIds = new Map<string, number>();
  const tsKey = strings.dedup(LABEL_TIMESTAMP_NS);
  for (const p of parts) {
    const s = (i: number | bigint): number => strings.dedup(fstr(p, i));
    const slot = p.sampleType.map((t) => typeNames.indexOf(`${fstr(p, t.type)}/${fstr(p, t.unit)}`));
    const mapIds = new Map<number, number>();
    for (const m of p.mapping) {
      const id = mappings.length + 1;
      mappings.push(new Mapping({ id, memoryStart: m.memoryStart, memoryLimit: m.memoryLimit, fileOffset: m.fileOffset, filename: s(m.filename), buildId: s(m.buildId) }));
      mapIds.set(Number(m.id), id);
    }
    const fnMap = new Map<number, number>();
    for (const f of p.function) {
      const key = `${fstr(p, f.name)}\u0000${fstr(p, f.systemName)}\u0000${fstr(p, f.filename)}\u0000${f.startLine}`;
      let id = fnIds.get(key);
      if (id === undefined) {
        id = functions.length + 1;
        functions.push(new PFunction({ id, name: s(f.name), systemName: s(f.systemName), filename: s(f.filename), startLine: f.startLine }));
        fnIds.set(key, id);
      }
      fnMap.set(Number(f.id), id);
    }
    const locMap = new Map<number, number>();
    for (const l of p.location) {
      const id = locations.length + 1;
      locations.push(
        new Location({
          id,
          mappingId: mapIds.get(Number(l.mappingId)) ?? 0,
          address: l.address,
          line: l.line.map((ln) => new Line({ functionId: fnMap.get(Number(ln.functionId)) ?? 0, line: ln.line })),
        }),
      );
      locMap.set(Number(l.id), id);
    }
    const pStart = BigInt(p.timeNanos);
    const inside = pStart >= fromNs && pStart + BigInt(p.durationNanos) <= toNs;
    const pTs = p.stringTable.strings.indexOf(LABEL_TIMESTAMP_NS);
    // A live window's times are kept beside its samples (see SampleTimes).
    const times = sampleTimes(p);
    p.sample.forEach((smp, i) => {
      const ts = sampleTimeNs(times, i, smp.label, pTs);
      if (ts === undefined ? !inside : ts < fromNs || ts > toNs) return;
      const value: (number | bigint)[] = typeNames.map(() => 0);
      smp.value.forEach((v, t) => {
        const k = slot[t] ?? -1;
        if (k >= 0) value[k] = v;
      });
      const label: Label[] = [];
      for (const l of smp.label) {
        if (Number(l.key) === pTs) continue;
        label.push(new Label({ key: s(l.key), str: Number(l.str) === 0 ? 0 : s(l.str), num: l.num, numUnit: Number(l.numUnit) === 0 ? 0 : s(l.numUnit) }));
      }
      if (ts !== undefined) label.push(new Label({ key: tsKey, num: ts }));
      samples.push(new Sample({ locationId: smp.locationId.map((id) => locMap.get(Number(id)) ?? 0), value, label }));
    });
  }
  const period = first?.periodType;
  return new Profile({
    sampleType,
    sample: samples,
    mapping: mappings,
    location: locations,
    function: functions,
    stringTable: strings,
    timeNanos: fromNs,
    durationNanos: toNs - fromNs,
    periodType: period === undefined || first === undefined ? new ValueType({ type: strings.dedup('wall'), unit: strings.dedup('nanoseconds') }) : new ValueType({ type: strings.dedup(fstr(first, period.type)), unit: strings.dedup(fstr(first, period.unit)) }),
    period: first?.period ?? 0,
    comment: comments.map((c) => strings.dedup(c)),
  });
}
