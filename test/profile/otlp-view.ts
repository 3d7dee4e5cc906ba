// Flatten a decoded OTLP request and a pprof profile into comparable
// observation strings: stack, labels, trace link, timestamp, value.
import type { Profile } from '../../src/core/pprof.js';
import type { DRequest } from './otlp-schema.js';
import { anyValueText } from './otlp-schema.js';

export function frameText(name: string, file: string, line: string | number): string {
  return `${name}@${file}:${line}`;
}

/** Observations per sample type (`type/unit`) of the OTLP request. */
export function otlpObservations(req: DRequest): Map<string, string[]> {
  const d = req.dictionary;
  const s = (i: number): string => d.string_table[i] ?? `<bad string ${i}>`;
  const out = new Map<string, string[]>();
  for (const rp of req.resource_profiles) {
    for (const sp of rp.scope_profiles) {
      for (const p of sp.profiles) {
        const type = `${s(p.sample_type?.type_strindex ?? 0)}/${s(p.sample_type?.unit_strindex ?? 0)}`;
        const list = out.get(type) ?? [];
        out.set(type, list);
        for (const sample of p.samples) {
          const stack = (d.stack_table[sample.stack_index]?.location_indices ?? []).map((li) => {
            const loc = d.location_table[li];
            return (loc?.lines ?? [])
              .map((l) => {
                const f = d.function_table[l.function_index];
                return frameText(s(f?.name_strindex ?? 0), s(f?.filename_strindex ?? 0), l.line);
              })
              .join('+');
          });
          const labels = sample.attribute_indices.map((ai) => {
            const a = d.attribute_table[ai];
            return `${s(a?.key_strindex ?? 0)}=${anyValueText(a?.value)}`;
          });
          if (sample.link_index !== 0) {
            const link = d.link_table[sample.link_index];
            labels.push(`trace_id=${link?.trace_id.toString('hex')}`, `span_id=${link?.span_id.toString('hex')}`);
          }
          labels.sort();
          for (let i = 0; i < sample.values.length; i++) {
            const ts = sample.timestamps_unix_nano[i] ?? '-';
            list.push(`${stack.join(';')}|${labels.join(',')}|${ts}|${sample.values[i]}`);
          }
        }
      }
    }
  }
  return out;
}

/** The same observations read straight from a pprof profile (non-zero values only). */
export function pprofObservations(p: Profile): Map<string, string[]> {
  const strs = p.stringTable.strings;
  const s = (i: number | bigint): string => strs[Number(i)] ?? '';
  const locs = new Map(p.location.map((l) => [Number(l.id), l]));
  const fns = new Map(p.function.map((f) => [Number(f.id), f]));
  const out = new Map<string, string[]>();
  p.sampleType.forEach((st, t) => {
    const type = `${s(st.type)}/${s(st.unit)}`;
    const list: string[] = [];
    out.set(type, list);
    // Observations without a timestamp carry no per-observation identity:
    // the OTLP encoder sums them per {stack, labels}; do the same here.
    const untimed = new Map<string, bigint>();
    for (const sample of p.sample) {
      const v = sample.value[t] ?? 0;
      if (v === 0 || v === 0n) continue;
      const stack = sample.locationId.map((id) =>
        (locs.get(Number(id))?.line ?? [])
          .map((l) => {
            const f = fns.get(Number(l.functionId));
            return frameText(s(f?.name ?? 0), s(f?.filename ?? 0), Number(l.line));
          })
          .join('+'),
      );
      let ts = '-';
      const labels: string[] = [];
      for (const l of sample.label) {
        if (s(l.key) === 'end_timestamp_ns') ts = String(l.num);
        else labels.push(`${s(l.key)}=${l.str !== 0 ? s(l.str) : String(l.num)}`);
      }
      labels.sort();
      if (ts === '-') {
        const key = `${stack.join(';')}|${labels.join(',')}|-`;
        untimed.set(key, (untimed.get(key) ?? 0n) + BigInt(v));
      } else list.push(`${stack.join(';')}|${labels.join(',')}|${ts}|${v}`);
    }
    for (const [key, sum] of untimed) list.push(`${key}|${sum}`);
  });
  return out;
}
