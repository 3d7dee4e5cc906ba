import { Label, LazyStringTable, Line, Location, Profile, Function as PprofFunction, sampleOf, setSampleTimes, ValueType } from '../core/pprof.js';
import type { Profile as ProfileT, Sample } from '../core/pprof.js';
import { STEP_ENTRIES, stepEvery } from '../core/slices.js';
import type { Steps } from '../core/slices.js';
import {
  LABEL_LOCAL_ROOT_SPAN_ID,
  LABEL_SPAN_ID,
  LABEL_SPAN_NAME,
  LABEL_THREAD_ID,
  LABEL_THREAD_NAME,
  LABEL_TIMESTAMP_NS,
  LABEL_TRACE_FLAGS,
  LABEL_TRACE_ID,
} from '../core/labels.js';
import { resolveSample, sampleName } from '../context/index.js';
import type { SampleContext } from '../context/index.js';
import { spanSlots } from '../context/span-slots.js';
import type { DecodedSpan } from '../context/span-slots.js';
import type { ThreadIdentity } from './labels.js';
import { StackPool } from './stack-pool.js';

/**
 * One stop of the native profiler, packed at the stop (see
 * native-chunk.ts): its samples, and per sampled context the value the
 * sampler held and when. Kept only until the window is assembled; a stop
 * inside the window waits seconds for its window to close, long enough for
 * the scavenger to copy every object it holds once or twice, so it holds
 * a few arrays, not an object per sample.
 */
export interface ProfileChunk {
  readonly packed: PackedChunk;
  /** Samples in the stop. */
  readonly samples: number;
  /** Per context: the value the sampler held (a span id in the span table, or an object). */
  readonly contexts: unknown[];
  /** Per context: when it was sampled, µs since the epoch (exact in a double). */
  readonly timestampsUs: number[];
  /** Per context: the sample's leaf frame is `(idle)`/`(program)` (no span code ran). */
  readonly notInSpan: boolean[];
}

/**
 * A chunk's samples and tables without per-entry objects: typed arrays and
 * a string array in place of a pprof profile's Sample objects with their
 * value, label and location arrays (~700 KB of JS objects per 600-sample
 * chunk under span load, measured with `bench/gc/survivors.ts`). Typed
 * arrays of this size keep their contents outside V8's heap, so the
 * scavenger has nothing to copy.
 */
export interface PackedChunk {
  readonly strings: string[];
  /** Per function: id, name, file name (string indices). */
  readonly functions: Int32Array;
  /** Per location: id, function id, line. */
  readonly locations: Int32Array;
  /** Sample i's stack is `stacks[stackStart[i]..stackStart[i + 1])` (location ids, leaf first). */
  readonly stackStart: Int32Array;
  readonly stacks: Int32Array;
  /** `valuesPerSample` values per sample: sample count, wall ns, and CPU ns when collected. */
  readonly values: Float64Array;
  readonly valuesPerSample: number;
  /** Per sample: its context's index in the chunk, or -1. */
  readonly contextIndex: Int32Array;
  /** The wall time of one hit in this stop (ns): the profile's period. */
  readonly intervalNanos: number;
}

/**
 * Build the window's wall profile from its chunks, yielding every few hundred
 * samples: one table of strings, functions and locations merged from every
 * chunk's, the samples in time order, and the sample types and period of a
 * @datadog/pprof wall profile (the period is the closing stop's). Every sample gets
 * the labels of DESIGN.md: thread id and name; with a span, its trace id,
 * span id, flags, name (read now, so a renamed span shows its final name)
 * and local root; with a context, its timestamp (`end_timestamp_ns`, kept
 * beside the samples as the profile's SampleTimes and written as a label).
 * Label objects and label arrays are built once per span and shared by its
 * samples.
 */
export function* assembleSteps(
  chunks: readonly ProfileChunk[],
  thread: ThreadIdentity,
  window: { readonly startUnixNs: bigint; readonly endUnixNs: bigint },
): Steps<ProfileT> {
  const last = chunks[chunks.length - 1];
  if (last === undefined) throw new Error('a window needs its closing stop');
  // The span labels add a few strings per span: keep them as strings only.
  const table = new LazyStringTable();
  const valuesPerSample = last.packed.valuesPerSample;
  const wallType = (): ValueType => new ValueType({ type: table.dedup('wall'), unit: table.dedup('nanoseconds') });
  const sampleType = [new ValueType({ type: table.dedup('sample'), unit: table.dedup('count') }), wallType()];
  if (valuesPerSample > 2) sampleType.push(new ValueType({ type: table.dedup('cpu'), unit: table.dedup('nanoseconds') }));
  // The types and period @datadog/pprof gives a wall profile; the period is
  // the closing stop's average interval.
  const out = new Profile({ sampleType, periodType: wallType(), period: last.packed.intervalNanos, stringTable: table });
  const key = {
    threadId: table.dedup(LABEL_THREAD_ID),
    threadName: table.dedup(LABEL_THREAD_NAME),
    traceId: table.dedup(LABEL_TRACE_ID),
    spanId: table.dedup(LABEL_SPAN_ID),
    flags: table.dedup(LABEL_TRACE_FLAGS),
    spanName: table.dedup(LABEL_SPAN_NAME),
    localRoot: table.dedup(LABEL_LOCAL_ROOT_SPAN_ID),
    ts: table.dedup(LABEL_TIMESTAMP_NS),
  };
  const threadLabels: Label[] = [
    new Label({ key: key.threadId, str: table.dedup(String(thread.tid)) }),
    new Label({ key: key.threadName, str: table.dedup(thread.name) }),
  ];
  const bySample = new Map<SampleContext, Label[]>();
  // Labels whose values repeat across spans (flags, span names): one object per value.
  const flagLabels = new Map<number, Label>();
  const nameLabels = new Map<number, Label>();
  const shared = (cache: Map<number, Label>, k: number, str: number): Label => {
    let l = cache.get(str);
    if (l === undefined) {
      l = new Label({ key: k, str });
      cache.set(str, l);
    }
    return l;
  };
  // Label arrays are made at their final length (a push past an array's
  // length grows its store by half again plus 16 slots, and these arrays
  // live as long as the window) and shared: every sample of a span has the
  // same array, samples without a span the thread's. Sample times are kept
  // beside the samples (see SampleTimes), not as a label of each.
  const makeLabels = (s: SampleContext): Label[] => {
    const name = sampleName(s);
    const root = s.localRootSpanId;
    const set = new Array<Label>(5 + (name === undefined ? 0 : 1) + (root === undefined ? 0 : 1));
    set[0] = threadLabels[0] as Label;
    set[1] = threadLabels[1] as Label;
    set[2] = new Label({ key: key.traceId, str: table.dedup(s.traceId) });
    const span = table.dedup(s.spanId);
    set[3] = new Label({ key: key.spanId, str: span });
    set[4] = shared(flagLabels, key.flags, table.dedup(flagsHex(s.traceFlags)));
    let i = 5;
    if (name !== undefined) set[i++] = shared(nameLabels, key.spanName, table.dedup(name));
    if (root !== undefined) set[i] = new Label({ key: key.localRoot, str: root === s.spanId ? span : table.dedup(root) });
    return set;
  };
  const spanLabels = (s: SampleContext): Label[] => {
    let set = bySample.get(s);
    if (set === undefined) {
      set = makeLabels(s);
      bySample.set(s, set);
    }
    return set;
  };
  // Span-table ids (what spanfuse binds) are resolved without an object per
  // ended span (see SpanSlots.resolveInto); their label arrays are keyed by id.
  const byId = new Map<number, Label[]>();
  const scratch: DecodedSpan = { traceId: '', spanId: '', traceFlags: 0, localRootSpanId: undefined, name: undefined };
  const labelsOf = (chunk: ProfileChunk, index: number): Label[] => {
    const value = chunk.contexts[index];
    if (typeof value === 'number') {
      let set = byId.get(value);
      if (set === undefined) {
        const s = spanSlots.resolveInto(value, scratch);
        if (s === undefined || s.spanId === '') return threadLabels;
        set = makeLabels(s);
        byId.set(value, set);
      }
      return chunk.notInSpan[index] !== true ? set : threadLabels;
    }
    // SampleContexts (no room in the span table), or a Span or a Context (other callers).
    const s = resolveSample(value);
    return s.spanId !== '' && chunk.notInSpan[index] !== true ? spanLabels(s) : threadLabels;
  };
  let total = 0;
  for (let c = 0; c < chunks.length; c++) total += (chunks[c]?.packed.stackStart.length ?? 1) - 1;
  // Per sample: when it was taken (µs), NaN without a sampled context.
  const timesUs = new Float64Array(total).fill(Number.NaN);

  // Every chunk's tables are merged into the window's, then its samples
  // added, in time order. Functions are keyed by (name, file) and locations
  // by (function, line), two string-table indices or ids packed in one
  // number (see pairKey). Indexed loops throughout: for-of in this
  // (interpreted) code allocates an iterator result per element.
  const due = stepEvery(STEP_ENTRIES);
  const samplesOut: Sample[] = [];
  // Samples with the same stack share one location-id array (see StackPool).
  const pool = new StackPool();
  const functionIds = new Map<number | string, number>();
  const locationIds = new Map<number | string, number>();
  for (let c = 0; c < chunks.length; c++) {
    const chunk = chunks[c];
    if (chunk === undefined) continue;
    const packed = chunk.packed;
    const strings = packed.strings;
    const str = new Array<number>(strings.length);
    for (let i = 0; i < strings.length; i++) {
      if (due()) yield;
      str[i] = table.dedup(strings[i] as string);
    }
    const fns = packed.functions;
    const fnMap = new Map<number, number>();
    for (let i = 0; i < fns.length; i += 3) {
      if (due()) yield;
      const name = str[fns[i + 1] as number] ?? 0;
      const file = str[fns[i + 2] as number] ?? 0;
      const k = pairKey(name, file);
      let id = functionIds.get(k);
      if (id === undefined) {
        id = out.function.length + 1;
        functionIds.set(k, id);
        out.function.push(new PprofFunction({ id, name, systemName: name, filename: file }));
      }
      fnMap.set(fns[i] as number, id);
    }
    const locs = packed.locations;
    const locMap = new Map<number, number>();
    for (let i = 0; i < locs.length; i += 3) {
      if (due()) yield;
      const fn = fnMap.get(locs[i + 1] as number) ?? 0;
      const lineNo = locs[i + 2] as number;
      const k = pairKey(fn, lineNo);
      let id = locationIds.get(k);
      if (id === undefined) {
        id = out.location.length + 1;
        locationIds.set(k, id);
        out.location.push(new Location({ id, line: [new Line({ functionId: fn, line: lineNo })] }));
      }
      locMap.set(locs[i] as number, id);
    }
    const { stackStart, stacks, values, contextIndex: ctx } = packed;
    const vps = packed.valuesPerSample;
    const samples = stackStart.length - 1;
    for (let i = 0; i < samples; i++) {
      if (due()) yield;
      const locationId = pool.fromPacked(stacks, stackStart[i] as number, stackStart[i + 1] as number, locMap);
      const value = valuesOf(values, i * vps, vps, valuesPerSample);
      const at = ctx[i] as number;
      if (at >= 0 && at < chunk.contexts.length) {
        timesUs[samplesOut.length] = chunk.timestampsUs[at] ?? 0;
        samplesOut.push(sampleOf(locationId, value, labelsOf(chunk, at)));
      } else samplesOut.push(sampleOf(locationId, value, threadLabels));
    }
  }
  out.sample = samplesOut;
  setSampleTimes(out, { key: key.ts, us: timesUs });
  out.timeNanos = window.startUnixNs;
  out.durationNanos = window.endUnixNs - window.startUnixNs;
  return out;
}

/**
 * A sample's values as an array of `n` (missing ones 0). The usual sizes are
 * literals: packed, with the elements kind their allocation site has seen,
 * where a `new Array(n)` filled in a loop is holey and moves to a second
 * backing store when a value is not a small integer (a CPU or wall time
 * over 2^30 ns).
 */
function valuesOf(values: Float64Array, at: number, have: number, n: number): number[] {
  if (have === n) {
    if (n === 3) return [values[at] as number, values[at + 1] as number, values[at + 2] as number];
    if (n === 2) return [values[at] as number, values[at + 1] as number];
  }
  const value = new Array<number>(n);
  for (let j = 0; j < n; j++) value[j] = j < have ? (values[at + j] as number) : 0;
  return value;
}

/** Two non-negative integers as one map key: a number while exact (a < 2^21, b < 2^32), else a string. */
function pairKey(a: number, b: number): number | string {
  return a < 0x200000 && b < 0x100000000 ? a * 0x100000000 + b : `${a}:${b}`;
}

/** `trace_flags` as two hex digits; the 256 strings are made once. */
const FLAGS_HEX: readonly string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

function flagsHex(flags: number): string {
  return (Number.isInteger(flags) && flags >= 0 && flags <= 255 ? FLAGS_HEX[flags] : undefined) ?? flags.toString(16).padStart(2, '0');
}
