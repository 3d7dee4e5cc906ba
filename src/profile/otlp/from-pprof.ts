import { sampleTimeNs, sampleTimes } from '../../core/pprof.js';
import type { Profile as Pprof } from '../../core/pprof.js';
import { LABEL_SPAN_ID, LABEL_THREAD_ID, LABEL_TIMESTAMP_NS, LABEL_TRACE_ID } from '../../core/labels.js';
import { stepEvery } from '../../core/slices.js';
import type { Steps } from '../../core/slices.js';
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

/** `thread.id` is an int in the semantic conventions; pprof labels carry it as text. */
function attributeValue(key: string, value: string): string | number {
  if (key === LABEL_THREAD_ID && /^\d{1,15}$/.test(value)) return Number(value);
  return value;
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
 *
 * A generator so a caller can spread the work over event-loop turns: it
 * yields after every `slice` samples.
 */
export function* fromPprof(dict: Dictionary, p: Pprof, frameTypeAttr: number, slice = Infinity): Steps<OtlpProfilePart[]> {
  const strings = p.stringTable.strings;
  const str = (i: number | bigint): string => strings[Number(i)] ?? '';

  const keyKind = new Int8Array(strings.length);
  for (let i = 0; i < strings.length; i++) {
    const s = strings[i];
    keyKind[i] = s === LABEL_TRACE_ID ? KIND_TRACE : s === LABEL_SPAN_ID ? KIND_SPAN : s === LABEL_TIMESTAMP_NS ? KIND_TS : KIND_OTHER;
  }

  const functionsById = new Map<number, number>();
  const hasFile = new Set<number>();
  let due = stepEvery(slice);
  for (const f of p.function) {
    if (due()) yield;
    functionsById.set(Number(f.id), dict.function(str(f.name), str(f.systemName), str(f.filename), Number(f.startLine)));
    if (str(f.filename) !== '') hasFile.add(Number(f.id));
  }
  const mappingsById = new Map<number, number>();
  for (const m of p.mapping) {
    mappingsById.set(Number(m.id), dict.mapping(m.memoryStart, m.memoryLimit, m.fileOffset, str(m.filename)));
  }
  const locationsById = new Map<number, number>();
  for (const loc of p.location) {
    if (due()) yield;
    const lines = loc.line.map((l) => ({ fn: functionsById.get(Number(l.functionId)) ?? 0, line: Number(l.line), column: Number(l.column) }));
    // JS frames have a file; V8's pseudo frames ("(program)", GC) do not.
    const isJs = loc.line.some((l) => hasFile.has(Number(l.functionId)));
    const mapping = mappingsById.get(Number(loc.mappingId)) ?? 0;
    locationsById.set(Number(loc.id), dict.location(mapping, loc.address, lines, isJs ? [frameTypeAttr] : []));
  }

  const stacks = new StackInterner(dict, locationsById);
  // Per label key (pprof string index): pprof value string index -> attribute.
  const strAttrs: (Map<number, number> | undefined)[] = [];
  const numAttrs = new Map<string, number>();
  // Per pprof string index: 1 = valid trace/span hex, 2 = not.
  const validHex = new Int8Array(strings.length);
  const links = new Map<number, Map<number, number>>();
  const groups = new GroupIndex();
  const nTypes = p.sampleType.length;
  const attrs: number[] = [];

  // Times kept beside the samples (see SampleTimes) count as their labels.
  const times = sampleTimes(p);
  due = stepEvery(slice);
  const samples = p.sample;
  for (let i = 0; i < samples.length; i++) {
    if (due()) yield;
    const s = samples[i] as Pprof['sample'][number];
    const stack = stacks.get(s.locationId);
    let traceStr = 0;
    let spanStr = 0;
    // Its label, if any, is read with the others below.
    let ts = sampleTimeNs(times, i, s.label, 0);
    attrs.length = 0;
    for (const l of s.label) {
      const k = Number(l.key);
      const kind = keyKind[k] ?? KIND_OTHER;
      const v = Number(l.str);
      if (v === 0) {
        if (kind === KIND_TS) {
          ts = BigInt(l.num);
          continue;
        }
        const cacheKey = `${k},${l.num},${l.numUnit}`;
        let a = numAttrs.get(cacheKey);
        if (a === undefined) {
          a = dict.attribute(str(k), BigInt(l.num), str(l.numUnit));
          numAttrs.set(cacheKey, a);
        }
        attrs.push(a);
        continue;
      }
      if (kind === KIND_TRACE || kind === KIND_SPAN) {
        let valid = validHex[v];
        if (valid === 0) {
          const text = str(v);
          const ok = (kind === KIND_TRACE ? HEX_TRACE : HEX_SPAN).test(text) && !ZEROS.test(text);
          valid = ok ? 1 : 2;
          validHex[v] = valid;
        }
        if (valid === 1) {
          if (kind === KIND_TRACE) traceStr = v;
          else spanStr = v;
          continue;
        }
      }
      let byValue = strAttrs[k];
      if (byValue === undefined) {
        byValue = new Map();
        strAttrs[k] = byValue;
      }
      let a = byValue.get(v);
      if (a === undefined) {
        a = dict.attribute(str(k), attributeValue(str(k), str(v)));
        byValue.set(v, a);
      }
      attrs.push(a);
    }
    // A trace id without a span id (or the reverse) cannot form a link;
    // keep what there is as attributes rather than lose it.
    let link = 0;
    if (traceStr !== 0 && spanStr !== 0) {
      let bySpan = links.get(traceStr);
      if (bySpan === undefined) {
        bySpan = new Map();
        links.set(traceStr, bySpan);
      }
      link = bySpan.get(spanStr) ?? 0;
      if (link === 0) {
        link = dict.link(str(traceStr).toLowerCase(), str(spanStr).toLowerCase());
        bySpan.set(spanStr, link);
      }
    } else {
      if (traceStr !== 0) attrs.push(dict.attribute(LABEL_TRACE_ID, str(traceStr)));
      if (spanStr !== 0) attrs.push(dict.attribute(LABEL_SPAN_ID, str(spanStr)));
    }
    sortSmall(attrs);

    const g = groups.get(stack, attrs, link, ts !== undefined, nTypes);
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
  const order = groups.order;

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

/** Interns pprof location-id lists as dictionary stacks; hashes instead of joining strings. */
class StackInterner {
  readonly #dict: Dictionary;
  readonly #locations: Map<number, number>;
  readonly #byHash = new Map<number, { ids: readonly (number | bigint)[]; stack: number }[]>();

  constructor(dict: Dictionary, locations: Map<number, number>) {
    this.#dict = dict;
    this.#locations = locations;
  }

  get(ids: readonly (number | bigint)[]): number {
    let h = ids.length;
    for (let i = 0; i < ids.length; i++) h = (Math.imul(h, 31) + Number(ids[i])) | 0;
    let bucket = this.#byHash.get(h);
    if (bucket === undefined) {
      bucket = [];
      this.#byHash.set(h, bucket);
    }
    for (const e of bucket) if (sameIds(e.ids, ids)) return e.stack;
    const stack = this.#dict.stack(ids.map((id) => this.#locations.get(Number(id)) ?? 0));
    bucket.push({ ids: [...ids], stack });
    return stack;
  }
}

function sameIds(a: readonly (number | bigint)[], b: readonly (number | bigint)[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Groups samples by identity {stack, attribute set, link} (and whether timed). */
class GroupIndex {
  readonly order: Group[] = [];
  readonly #byHash = new Map<number, Group[]>();

  get(stack: number, attrs: readonly number[], link: number, timed: boolean, nTypes: number): Group {
    let h = (Math.imul(stack, 0x9e3779b1) ^ Math.imul(link + 1, 0x85ebca6b) ^ (timed ? 0x5bd1e995 : 0)) | 0;
    for (let i = 0; i < attrs.length; i++) h = (Math.imul(h, 31) + (attrs[i] as number)) | 0;
    let bucket = this.#byHash.get(h);
    if (bucket === undefined) {
      bucket = [];
      this.#byHash.set(h, bucket);
    }
    for (const g of bucket) {
      if (g.stack === stack && g.link === link && g.timed === timed && sameNumbers(g.attrs, attrs)) return g;
    }
    const g: Group = {
      stack,
      attrs: attrs.slice(),
      link,
      timed,
      perType: Array.from({ length: nTypes }, () => ({ values: [], timestamps: [] })),
    };
    bucket.push(g);
    this.order.push(g);
    return g;
  }
}

function sameNumbers(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Insertion sort: a sample has a handful of attributes; cheaper than Array#sort with a callback. */
function sortSmall(a: number[]): void {
  for (let i = 1; i < a.length; i++) {
    const v = a[i] as number;
    let j = i - 1;
    while (j >= 0 && (a[j] as number) > v) {
      a[j + 1] = a[j] as number;
      j--;
    }
    a[j + 1] = v;
  }
}
