/**
 * pprof-format ships both a CommonJS and an ES build. @datadog/pprof (CJS)
 * builds its profiles from the CommonJS one, so everything in spanfuse uses
 * that same build: one set of classes at runtime, one set of types.
 */
import { createRequire } from 'node:module';
import type * as PprofFormat from 'pprof-format' with { 'resolution-mode': 'require' };

const require = createRequire(import.meta.url);
const pf = require('pprof-format') as typeof PprofFormat;

export const { Profile, Sample, Label, Location, Line, Function, Mapping, ValueType, StringTable } = pf;
export type Profile = PprofFormat.Profile;
export type Sample = PprofFormat.Sample;
export type Label = PprofFormat.Label;
export type Location = PprofFormat.Location;
export type Line = PprofFormat.Line;
export type Function = PprofFormat.Function;
export type Mapping = PprofFormat.Mapping;
export type ValueType = PprofFormat.ValueType;
export type StringTable = PprofFormat.StringTable;

/**
 * The first of `labels` whose key is the string-table index `key`. An
 * indexed loop: window code runs once per window, mostly interpreted, where
 * a for-of or a `find` callback allocates per label.
 */
export function findLabel(labels: readonly Label[], key: number): Label | undefined {
  for (let i = 0; i < labels.length; i++) {
    const l = labels[i] as Label;
    if (Number(l.key) === key) return l;
  }
  return undefined;
}

/**
 * A Sample that holds `label` as it is. pprof-format's constructor copies
 * the label array it is given (one more array per sample, alive as long as
 * the window: ~2.3 MB of a 60,000-sample window's build survived the
 * scavenger as such copies, measured with `bench/gc/survivors.ts`).
 */
export function sampleOf(locationId: Array<number | bigint>, value: Array<number | bigint>, label: Label[]): Sample {
  const s = new pf.Sample({ locationId, value });
  s.label = label;
  return s;
}

/**
 * When each sample of a profile was taken, kept beside its samples instead
 * of as an `end_timestamp_ns` label of each. A window's samples live from
 * its assembly until it is written, seconds and several young-generation
 * collections later; a label object per sample (with its two BigInts, and
 * a label array per sample to hold it) was a sixth of what the scavenger
 * copied while a large window was built (4.0 of 24.7 MB over the build of
 * a 60,000-sample window, `bench/gc/survivors.ts`). Without the per-sample
 * label, every sample of a span shares one label array.
 *
 * The writers (pprof, OTLP) and readers of a profile take a sample's time
 * from here when the profile has times and the sample is inside them, and
 * from its label otherwise (profiles decoded from files, built by tests, or
 * a sample appended after assembly), so both forms mean the same.
 */
export interface SampleTimes {
  /** String-table index of `end_timestamp_ns` in the profile. */
  readonly key: number;
  /** Per sample, by its index in `sample`: µs since the epoch (an integer), NaN for a sample without a time. */
  readonly us: Float64Array;
}

const sampleTimesOf = new WeakMap<Profile, SampleTimes>();

/** The sample times kept beside `p`'s samples, if any. */
export function sampleTimes(p: Profile): SampleTimes | undefined {
  return sampleTimesOf.get(p);
}

/** Keep `times` beside `p`'s samples (index i is `p.sample[i]`); returns `p`. */
export function setSampleTimes<P extends Profile>(p: P, times: SampleTimes): P {
  sampleTimesOf.set(p, times);
  return p;
}

/** Sample `i`'s time kept in `times` (µs since the epoch), NaN when `times` has none for it. */
export function sampleTimeUs(times: SampleTimes | undefined, i: number): number {
  return times !== undefined && i < times.us.length ? (times.us[i] as number) : Number.NaN;
}

/**
 * Sample `i`'s time in ns since the epoch: from `times` when it covers the
 * sample, else from the sample's `tsKey` label (0 or less: no such key).
 */
export function sampleTimeNs(times: SampleTimes | undefined, i: number, labels: readonly Label[], tsKey: number): bigint | undefined {
  const us = sampleTimeUs(times, i);
  if (!Number.isNaN(us)) return BigInt(us) * 1000n;
  if (tsKey <= 0) return undefined;
  const l = findLabel(labels, tsKey);
  return l === undefined ? undefined : BigInt(l.num);
}

/**
 * A pprof string table that keeps strings only. pprof-format's own table
 * encodes every string to UTF-8 the moment it is added and keeps the bytes
 * beside it (a Uint8Array and its ArrayBuffer per string, ~180 bytes on the
 * heap for a span id), for its own serializer. spanfuse serializes with its
 * own writer, which reads `strings` only, so the bytes were dead weight: a
 * window's span labels add ~2,000 strings, and the copies lived until the
 * window was written, long enough to be copied by the scavenger. Here
 * nothing is encoded until `encode()` (or pprof-format's `Profile.encode`)
 * asks, and the lookup map is made on the first `dedup`.
 */
export class LazyStringTable extends pf.StringTable {
  #positions: Map<string, number> | undefined;

  /** Adopts `strings` (not copied); `strings[0]` must be the empty string. */
  constructor(strings?: string[]) {
    super(pf.emptyTableToken);
    if (strings !== undefined && strings.length > 0 && strings[0] !== '') {
      throw new Error('a pprof string table starts with the empty string');
    }
    this.strings = strings === undefined || strings.length === 0 ? [''] : strings;
  }

  override dedup(string: string): number {
    // pprof-format's table passes numbers through (an index already).
    if (typeof string === 'number') return string;
    let positions = this.#positions;
    if (positions === undefined) {
      positions = new Map();
      const strings = this.strings;
      for (let i = strings.length - 1; i >= 0; i--) positions.set(strings[i] ?? '', i);
      this.#positions = positions;
    }
    let i = positions.get(string);
    if (i === undefined) {
      i = this.strings.push(string) - 1;
      positions.set(string, i);
    }
    return i;
  }

  override get encodedLength(): number {
    let size = 0;
    for (const s of this.strings) {
      const n = Buffer.byteLength(s, 'utf8');
      size += 1 + varintLength(n) + n;
    }
    return size;
  }

  override _encodeToBuffer(buffer: Uint8Array, offset: number): number {
    const encoder = new TextEncoder();
    for (const s of this.strings) {
      const bytes = encoder.encode(s);
      buffer[offset++] = 50; // field 6 (string_table), length-delimited
      let n = bytes.length;
      while (n > 127) {
        buffer[offset++] = (n & 127) | 128;
        n >>>= 7;
      }
      buffer[offset++] = n;
      buffer.set(bytes, offset);
      offset += bytes.length;
    }
    return offset;
  }

  override encode(buffer: Uint8Array<ArrayBuffer> = new Uint8Array(this.encodedLength)): Uint8Array {
    this._encodeToBuffer(buffer, 0);
    return buffer;
  }

  override _decodeString(buffer: Uint8Array): void {
    const s = new TextDecoder().decode(buffer);
    const i = this.strings.push(s) - 1;
    if (this.#positions !== undefined && !this.#positions.has(s)) this.#positions.set(s, i);
  }
}

function varintLength(n: number): number {
  let len = 1;
  while (n > 127) {
    n >>>= 7;
    len++;
  }
  return len;
}
