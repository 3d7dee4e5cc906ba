import { sampleTimes, sampleTimeUs } from '../../core/pprof.js';
import type { Label, Profile as Pprof } from '../../core/pprof.js';
import { LABEL_SPAN_ID, LABEL_THREAD_ID, LABEL_TIMESTAMP_NS, LABEL_TRACE_ID } from '../../core/labels.js';
import { stepEvery } from '../../core/slices.js';
import type { Steps } from '../../core/slices.js';
import type { Dictionary } from './dictionary.js';
import type { ProtoWriter } from './proto-writer.js';

/**
 * One OTLP Profile (one sample type of a pprof profile) before writing. Its
 * samples are the groups of `observations`, read at write time (see
 * {@link writeSamples}): a window's observations stay in the pprof profile
 * they come from, so a 60,000-sample window makes no object or array per
 * sample on its way to OTLP, and, with its times kept beside the samples
 * (SampleTimes), no BigInt either.
 */
export interface OtlpProfilePart {
  readonly typeStr: number;
  readonly unitStr: number;
  readonly periodTypeStr: number;
  readonly periodUnitStr: number;
  readonly period: number | bigint;
  /** Index of this part's sample type in the pprof samples' values. */
  readonly type: number;
  readonly observations: Observations;
}

/**
 * The samples of one pprof profile grouped by OTLP identity {stack,
 * attributes, link}: each group's pprof samples are a chain through `next`,
 * in sample order.
 */
export interface Observations {
  readonly groups: readonly Group[];
  /** Per pprof sample: the next sample of its group, or -1. */
  readonly next: Int32Array;
  readonly samples: Pprof['sample'];
  /** Per pprof sample: its time kept beside the samples (µs), NaN when none or when a label gives it. */
  readonly timesUs: Float64Array;
  /** Per pprof sample, only when some sample has one: its `end_timestamp_ns` label's value. */
  readonly labelNs: (number | bigint | undefined)[] | undefined;
  /**
   * Sample i's value of type t at `i * types + t`, copied while the sample
   * is read for its labels (the write reads them again per type, by group);
   * undefined when a value is not a safe integer (then read from `samples`).
   */
  readonly values: Float64Array | undefined;
  readonly types: number;
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
  /** First and last pprof sample of the group (see Observations.next). */
  readonly first: number;
  last: number;
  /** The next group whose identity has the same hash. */
  sameHash: Group | undefined;
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
  const functions = p.function;
  for (let i = 0; i < functions.length; i++) {
    if (due()) yield;
    const f = functions[i] as Pprof['function'][number];
    functionsById.set(Number(f.id), dict.function(str(f.name), str(f.systemName), str(f.filename), Number(f.startLine)));
    if (str(f.filename) !== '') hasFile.add(Number(f.id));
  }
  const mappingsById = new Map<number, number>();
  for (const m of p.mapping) {
    mappingsById.set(Number(m.id), dict.mapping(m.memoryStart, m.memoryLimit, m.fileOffset, str(m.filename)));
  }
  const locationsById = new Map<number, number>();
  const locations = p.location;
  for (let i = 0; i < locations.length; i++) {
    if (due()) yield;
    const loc = locations[i] as Pprof['location'][number];
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
  const samples = p.sample;
  const groups = new GroupIndex(samples.length);
  const attrs: number[] = [];

  // Times kept beside the samples (see SampleTimes) count as their labels;
  // a sample's own `end_timestamp_ns` label wins over them.
  const times = sampleTimes(p);
  const timesUs = new Float64Array(samples.length);
  let labelNs: (number | bigint | undefined)[] | undefined;
  const types = p.sampleType.length;
  let values: Float64Array | undefined = new Float64Array(samples.length * types);
  due = stepEvery(slice);
  for (let i = 0; i < samples.length; i++) {
    if (due()) yield;
    const s = samples[i] as Pprof['sample'][number];
    const stack = stacks.get(s.locationId);
    if (values !== undefined && !copyValues(values, i * types, s.value, types)) values = undefined;
    let traceStr = 0;
    let spanStr = 0;
    let timed = false;
    const us = sampleTimeUs(times, i);
    timesUs[i] = us;
    if (!Number.isNaN(us)) timed = true;
    attrs.length = 0;
    const labels = s.label;
    for (let j = 0; j < labels.length; j++) {
      const l = labels[j] as Label;
      const k = Number(l.key);
      const kind = keyKind[k] ?? KIND_OTHER;
      const v = Number(l.str);
      if (v === 0) {
        if (kind === KIND_TS) {
          labelNs ??= new Array<number | bigint | undefined>(samples.length);
          labelNs[i] = l.num;
          timesUs[i] = Number.NaN;
          timed = true;
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
    groups.add(i, stack, attrs, link, timed);
  }
  const observations: Observations = { groups: groups.order, next: groups.next, samples, timesUs, labelNs, values, types };

  const periodType = p.periodType;
  const parts: OtlpProfilePart[] = [];
  for (let t = 0; t < p.sampleType.length; t++) {
    const st = p.sampleType[t];
    if (st === undefined) continue;
    parts.push({
      typeStr: dict.string(str(st.type)),
      unitStr: dict.string(str(st.unit)),
      periodTypeStr: periodType ? dict.string(str(periodType.type)) : 0,
      periodUnitStr: periodType ? dict.string(str(periodType.unit)) : 0,
      period: p.period,
      type: t,
      observations,
    });
  }
  return parts;
}

/**
 * Write a part's samples (OTLP `Sample`, field `field` of its Profile), one
 * per group with a non-zero value of the part's type, yielding every
 * `slice` groups: a timed group keeps each non-zero observation and its
 * timestamp, an untimed one their sum. Zero-valued observations carry no
 * weight and are left out.
 */
export function* writeSamples(w: ProtoWriter, field: number, part: OtlpProfilePart, slice: number): Steps<void> {
  const obs = part.observations;
  const due = stepEvery(slice);
  let at = 0;
  while (at < obs.groups.length) {
    at = writeGroups(w, field, obs, part.type, at, due);
    if (at < obs.groups.length) yield;
  }
}

/**
 * The groups from `from` on, until `due()` asks for a break: the index of
 * the next group to write. A plain function, not the generator's body: V8
 * keeps this loop optimized across a window's three parts.
 */
function writeGroups(w: ProtoWriter, field: number, obs: Observations, t: number, from: number, due: () => boolean): number {
  const { groups, next, timesUs, labelNs } = obs;
  for (let gi = from; gi < groups.length; gi++) {
    if (due() && gi !== from) return gi;
    const g = groups[gi] as Group;
    if (g.first === g.last) {
      // Most groups (a span's sample with its stack) hold one observation.
      const i = g.first;
      const v = valueOf(obs, i, t);
      if (isZero(v)) continue;
      openSample(w, field, g);
      w.fork(4);
      w.element(v);
      w.join();
      if (g.timed) {
        w.packedFixed64Start(5, 1);
        writeTime(w, timesUs, labelNs, i);
      }
      w.join();
      continue;
    }
    let count = 0;
    let sum: number | bigint = 0;
    for (let i = g.first; i >= 0; i = next[i] as number) {
      const v = valueOf(obs, i, t);
      if (isZero(v)) continue;
      sum = count === 0 ? v : add(sum, v);
      count++;
    }
    if (count === 0) continue;
    openSample(w, field, g);
    if (!g.timed) {
      w.fork(4);
      w.element(sum);
      w.join();
      w.join();
      continue;
    }
    w.fork(4);
    for (let i = g.first; i >= 0; i = next[i] as number) {
      const v = valueOf(obs, i, t);
      if (!isZero(v)) w.element(v);
    }
    w.join();
    w.packedFixed64Start(5, count);
    for (let i = g.first; i >= 0; i = next[i] as number) {
      if (!isZero(valueOf(obs, i, t))) writeTime(w, timesUs, labelNs, i);
    }
    w.join();
  }
  return groups.length;
}

/** Start group `g`'s OTLP Sample: stack, attributes, link; the caller writes its values (and times) and joins. */
function openSample(w: ProtoWriter, field: number, g: Group): void {
  w.fork(field);
  w.varint(1, g.stack);
  w.packedVarints(2, g.attrs);
  w.varint(3, g.link);
}

/** Copy `n` values to `out` from `at`; false when one is not a safe integer. */
function copyValues(out: Float64Array, at: number, value: readonly (number | bigint)[], n: number): boolean {
  for (let t = 0; t < n; t++) {
    const v = value[t] ?? 0;
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) return false;
    out[at + t] = v;
  }
  return true;
}

/** Sample `i`'s time as one fixed64 element (ns). */
function writeTime(w: ProtoWriter, timesUs: Float64Array, labelNs: Observations['labelNs'], i: number): void {
  const us = timesUs[i] as number;
  if (!Number.isNaN(us)) w.fixed64ElementMicros(us);
  else {
    const ns = labelNs?.[i] ?? 0n;
    w.fixed64Element(typeof ns === 'bigint' ? ns : BigInt(ns));
  }
}

function valueOf(obs: Observations, i: number, t: number): number | bigint {
  const values = obs.values;
  return values !== undefined ? (values[i * obs.types + t] as number) : (obs.samples[i]?.value[t] ?? 0);
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

/** Groups samples by identity {stack, attributes, link} (and whether timed). */
class GroupIndex {
  readonly order: Group[] = [];
  readonly next: Int32Array;
  readonly #byHash = new Map<number, Group>();

  constructor(samples: number) {
    this.next = new Int32Array(samples).fill(-1);
  }

  /** Add sample `i` to its group (a new one the first time its identity is seen). */
  add(i: number, stack: number, attrs: readonly number[], link: number, timed: boolean): void {
    let h = (Math.imul(stack, 0x9e3779b1) ^ Math.imul(link + 1, 0x85ebca6b) ^ (timed ? 0x5bd1e995 : 0)) | 0;
    for (let j = 0; j < attrs.length; j++) h = (Math.imul(h, 31) + (attrs[j] as number)) | 0;
    const head = this.#byHash.get(h);
    for (let g = head; g !== undefined; g = g.sameHash) {
      if (g.stack === stack && g.link === link && g.timed === timed && sameNumbers(g.attrs, attrs)) {
        this.next[g.last] = i;
        g.last = i;
        return;
      }
    }
    const g: Group = { stack, attrs: attrs.slice(), link, timed, first: i, last: i, sameHash: head };
    this.#byHash.set(h, g);
    this.order.push(g);
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
