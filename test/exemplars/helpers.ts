import type { HrTime } from '@opentelemetry/api';
import { Function as PFunction, Label, Line, Location, Profile, Sample, StringTable, ValueType } from '../../src/core/pprof.js';
import type { WindowProfile } from '../../src/core/window.js';

/** Deterministic PRNG (mulberry32) so failures reproduce. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Standard normal by Box-Muller. */
export function gaussian(r: () => number): number {
  let u = 0;
  while (u === 0) u = r();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r());
}

/** Value at rank floor(q * (n - 1)) of an ascending array (the sketch's definition). */
export function exactQuantile(sorted: readonly number[], q: number): number {
  return sorted[Math.floor(q * (sorted.length - 1))]!;
}

/** Insert into an ascending array, keeping it sorted. */
export function insertSorted(arr: number[], x: number): void {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (arr[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  arr.splice(lo, 0, x);
}

export function msToHr(ms: number): HrTime {
  const ns = Math.round(ms * 1e6);
  return [Math.floor(ns / 1e9), ns % 1e9];
}

export function hrToMs(t: HrTime): number {
  return (t[0] * 1e9 + t[1]) / 1e6;
}

/** One sample of a synthetic window. */
export interface FakeSample {
  readonly spanId?: string;
  readonly rootId?: string;
  readonly fn: string;
  readonly file?: string;
  readonly line?: number;
  readonly wallNs: number;
  readonly cpuNs: number;
  readonly count?: number;
}

/**
 * A window whose wall profile is a real pprof-format Profile with the shape
 * @datadog/pprof gives (sample/count, wall/nanoseconds, cpu/nanoseconds and
 * span labels); used where the real sampler would make figures unknowable.
 */
export function fakeWindow(profileId: string, startUnixNs: bigint, endUnixNs: bigint, samples: readonly FakeSample[]): WindowProfile {
  const st = new StringTable();
  const fnIds = new Map<string, number>();
  const functions: InstanceType<typeof PFunction>[] = [];
  const locations: InstanceType<typeof Location>[] = [];
  const keySpan = st.dedup('span_id');
  const keyRoot = st.dedup('local_root_span_id');
  const keyThread = st.dedup('thread.name');
  const out: InstanceType<typeof Sample>[] = [];
  for (const s of samples) {
    const fkey = `${s.fn}|${s.file ?? ''}|${s.line ?? 0}`;
    let id = fnIds.get(fkey);
    if (id === undefined) {
      id = functions.length + 1;
      fnIds.set(fkey, id);
      functions.push(new PFunction({ id, name: st.dedup(s.fn), systemName: st.dedup(s.fn), filename: st.dedup(s.file ?? '') }));
      locations.push(new Location({ id, line: [new Line({ functionId: id, line: s.line ?? 0 })] }));
    }
    const labels = [new Label({ key: keyThread, str: st.dedup('main') })];
    if (s.spanId !== undefined) labels.push(new Label({ key: keySpan, str: st.dedup(s.spanId) }));
    if (s.rootId !== undefined) labels.push(new Label({ key: keyRoot, str: st.dedup(s.rootId) }));
    out.push(new Sample({ locationId: [id], value: [s.count ?? 1, s.wallNs, s.cpuNs], label: labels }));
  }
  const wall = new Profile({
    sampleType: [
      new ValueType({ type: st.dedup('sample'), unit: st.dedup('count') }),
      new ValueType({ type: st.dedup('wall'), unit: st.dedup('nanoseconds') }),
      new ValueType({ type: st.dedup('cpu'), unit: st.dedup('nanoseconds') }),
    ],
    sample: out,
    location: locations,
    function: functions,
    stringTable: st,
  });
  return {
    profileId,
    seq: 0,
    startUnixNs,
    endUnixNs,
    samplingIntervalMicros: 1000,
    mode: 'async-context-frame',
    wall,
    attributes: {},
    tailSpans: [],
  };
}
