import type { Profile as Pprof } from '../../core/pprof.js';
import { LABEL_SPAN_ID, LABEL_TIMESTAMP_NS, LABEL_TRACE_ID } from '../../core/labels.js';
import type { Dictionary } from './dictionary.js';

/** One OTLP Sample before writing: identity plus its observations. */
export interface OtlpSample {
  readonly stack: number;
  readonly attrs: readonly number[];
  readonly link: number;
  /** Per-observation values; one summed value when there are no timestamps. */
  readonly values: (number | bigint)[];
  readonly timestamps: bigint[];
}

/** One OTLP Profile (one sample type) before writing. */
export interface OtlpProfilePart {
  readonly typeStr: number;
  readonly unitStr: number;
  readonly periodTypeStr: number;
  readonly periodUnitStr: number;
  readonly period: number | bigint;
  readonly samples: OtlpSample[];
}

const HEX_TRACE = /^[0-9a-fA-F]{32}$/;
const HEX_SPAN = /^[0-9a-fA-F]{16}$/;
const ZEROS = /^0+$/;

const KIND_OTHER = 0;
const KIND_TRACE = 1;
const KIND_SPAN = 2;
const KIND_TS = 3;

interface Group {
  readonly stack: number;
  readonly attrs: number[];
  readonly link: number;
  readonly timed: boolean;
  /** Per sample type: observations. */
  readonly perType: { values: (number | bigint)[]; timestamps: bigint[] }[];
}

function isZero(v: number | bigint): boolean {
  return v === 0 || v === 0n;
}

function add(a: number | bigint, b: number | bigint): number | bigint {
  if (typeof a === 'number' && typeof b === 'number') {
    const s = a + b;
    if (Number.isSafeInteger(s)) return s;
  }
  return BigInt(a) + BigInt(b);
}

/**
 * Turn one pprof profile into OTLP profiles, one per sample type, with every
 * stack, function, location, label and trace link interned in `dict`.
 * `trace_id`/`span_id` become a Link, `end_timestamp_ns` becomes the sample's
 * timestamp, every other label an attribute. Samples with equal identity
 * {stack, attributes, link} merge; zero-valued observations carry no weight
 * and are left out of that sample type's profile.
 */
export function fromPprof(dict: Dictionary, p: Pprof, frameTypeAttr: number): OtlpProfilePart[] {
  const strings = p.stringTable.strings;
  const str = (i: number | bigint): string => strings[Number(i)] ?? '';

  const keyKind = new Int8Array(strings.length);
  for (let i = 0; i < strings.length; i++) {
    const s = strings[i];
    keyKind[i] = s === LABEL_TRACE_ID ? KIND_TRACE : s === LABEL_SPAN_ID ? KIND_SPAN : s === LABEL_TIMESTAMP_NS ? KIND_TS : KIND_OTHER;
  }

  const functionsById = new Map<number, number>();
  const hasFile = new Set<number>();
  for (const f of p.function) {
    functionsById.set(Number(f.id), dict.function(str(f.name), str(f.systemName), str(f.filename), Number(f.startLine)));
    if (str(f.filename) !== '') hasFile.add(Number(f.id));
  }
  const mappingsById = new Map<number, number>();
  for (const m of p.mapping) {
    mappingsById.set(Number(m.id), dict.mapping(m.memoryStart, m.memoryLimit, m.fileOffset, str(m.filename)));
  }
  const locationsById = new Map<number, number>();
  for (const loc of p.location) {
    const lines = loc.line.map((l) => ({ fn: functionsById.get(Number(l.functionId)) ?? 0, line: Number(l.line), column: Number(l.column) }));
    // JS frames have a file; V8's pseudo frames ("(program)", GC) do not.
    const isJs = loc.line.some((l) => hasFile.has(Number(l.functionId)));
    const mapping = mappingsById.get(Number(loc.mappingId)) ?? 0;
    locationsById.set(Number(loc.id), dict.location(mapping, loc.address, lines, isJs ? [frameTypeAttr] : []));
  }

  const stackCache = new Map<string, number>();
  const attrCache = new Map<string, number>();
  const groups = new Map<string, Group>();
  const order: Group[] = [];
  const nTypes = p.sampleType.length;

  for (const s of p.sample) {
    const stackKey = s.locationId.join(',');
    let stack = stackCache.get(stackKey);
    if (stack === undefined) {
      stack = dict.stack(s.locationId.map((id) => locationsById.get(Number(id)) ?? 0));
      stackCache.set(stackKey, stack);
    }

    let traceId: string | undefined;
    let spanId: string | undefined;
    let ts: bigint | undefined;
    const attrs: number[] = [];
    for (const l of s.label) {
      const k = Number(l.key);
      const kind = keyKind[k] ?? KIND_OTHER;
      const isStr = !isZero(l.str);
      if (kind === KIND_TS && !isStr) {
        ts = BigInt(l.num);
        continue;
      }
      if (kind === KIND_TRACE && isStr) {
        const v = str(l.str);
        if (HEX_TRACE.test(v) && !ZEROS.test(v)) {
          traceId = v.toLowerCase();
          continue;
        }
      } else if (kind === KIND_SPAN && isStr) {
        const v = str(l.str);
        if (HEX_SPAN.test(v) && !ZEROS.test(v)) {
          spanId = v.toLowerCase();
          continue;
        }
      }
      const cacheKey = isStr ? `${k}s${l.str}` : `${k}n${l.num}u${l.numUnit}`;
      let a = attrCache.get(cacheKey);
      if (a === undefined) {
        a = isStr ? dict.attribute(str(k), str(l.str)) : dict.attribute(str(k), BigInt(l.num), str(l.numUnit));
        attrCache.set(cacheKey, a);
      }
      attrs.push(a);
    }
    // A trace id without a span id (or the reverse) cannot form a link;
    // keep what there is as attributes rather than lose it.
    let link = 0;
    if (traceId !== undefined && spanId !== undefined) link = dict.link(traceId, spanId);
    else {
      if (traceId !== undefined) attrs.push(dict.attribute(LABEL_TRACE_ID, traceId));
      if (spanId !== undefined) attrs.push(dict.attribute(LABEL_SPAN_ID, spanId));
    }
    attrs.sort((a, b) => a - b);

    const timed = ts !== undefined;
    const key = `${stack};${attrs.join(',')};${link};${timed ? 't' : 'u'}`;
    let g = groups.get(key);
    if (g === undefined) {
      g = { stack, attrs, link, timed, perType: Array.from({ length: nTypes }, () => ({ values: [], timestamps: [] })) };
      groups.set(key, g);
      order.push(g);
    }
    for (let t = 0; t < nTypes; t++) {
      const v = s.value[t] ?? 0;
      if (isZero(v)) continue;
      const obs = g.perType[t];
      if (obs === undefined) continue;
      if (ts !== undefined) {
        obs.values.push(v);
        obs.timestamps.push(ts);
      } else if (obs.values.length === 0) obs.values.push(v);
      else obs.values[0] = add(obs.values[0] ?? 0, v);
    }
  }

  const periodType = p.periodType;
  const parts: OtlpProfilePart[] = [];
  for (let t = 0; t < nTypes; t++) {
    const st = p.sampleType[t];
    if (st === undefined) continue;
    const samples: OtlpSample[] = [];
    for (const g of order) {
      const obs = g.perType[t];
      if (obs === undefined || obs.values.length === 0) continue;
      samples.push({ stack: g.stack, attrs: g.attrs, link: g.link, values: obs.values, timestamps: obs.timestamps });
    }
    parts.push({
      typeStr: dict.string(str(st.type)),
      unitStr: dict.string(str(st.unit)),
      periodTypeStr: periodType ? dict.string(str(periodType.type)) : 0,
      periodUnitStr: periodType ? dict.string(str(periodType.unit)) : 0,
      period: p.period,
      samples,
    });
  }
  return parts;
}
