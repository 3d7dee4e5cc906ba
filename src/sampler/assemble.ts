import type { LabelSet } from '@datadog/pprof';
import type { GenerateTimeLabelsArgs } from '@datadog/pprof/out/src/v8-types.js';
import { findLabel, Label, LazyStringTable, Line, Location, Function as PprofFunction, sampleOf } from '../core/pprof.js';
import type { Profile as ProfileT, Sample } from '../core/pprof.js';
import { STEP_ENTRIES } from '../core/slices.js';
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
import type { ThreadIdentity } from './labels.js';
import { StackPool } from './stack-pool.js';

/**
 * While the native profile is converted, each sample with a context gets one
 * numeric label: the index of its context in the chunk. It goes under the
 * key of the timestamp label, which every such sample carries in the end, so
 * no extra string is left in the profile's table; {@link assembleSteps}
 * replaces it with the real labels (the timestamp among them).
 */
const LABEL_CONTEXT_INDEX = LABEL_TIMESTAMP_NS;

/** Stack roots that mean "no JS of any span was running". */
const NOT_IN_SPAN = new Set(['(idle)', '(program)']);

/** One sample context as @datadog/pprof hands it to the label callback. */
interface CapturedContext {
  readonly context?: unknown;
  readonly timestamp: bigint;
}

/**
 * One stop of the native profiler: its samples, each with a single cheap
 * label (an index), and the contexts those labels point at. Kept only until
 * the window is assembled. What a chunk holds per sample is kept flat (a
 * context value, mostly a small integer, and a number), not the object
 * @datadog/pprof hands over with its BigInt; and a stop inside the window is
 * packed soon after (see {@link packSteps}), since it waits seconds for its
 * window to close: long enough for the scavenger to copy every one of its
 * objects once or twice.
 */
export interface ProfileChunk {
  /** The stop's profile as @datadog/pprof made it; undefined once packed. */
  profile: ProfileT | undefined;
  /** The same samples and tables in a few arrays; set when packed. */
  packed: PackedChunk | undefined;
  /** Set when the window that holds the chunk is closed: a packing still under way stops. */
  claimed: boolean;
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
 * A chunk's samples and tables without per-entry objects: two typed arrays
 * and a string array in place of ~600 Sample objects with their value,
 * label and location arrays (~700 KB of JS objects per chunk under span
 * load, measured with `bench/gc/survivors.ts`). Typed arrays of this size
 * keep their contents outside V8's heap, so the scavenger has nothing to copy.
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
  /** `valuesPerSample` values per sample, in the profile's sample-type order. */
  readonly values: Float64Array;
  readonly valuesPerSample: number;
  /** Per sample: its context's index in the chunk, or -1. */
  readonly contextIndex: Int32Array;
}

/** A chunk fresh from a native stop. */
export function profileChunk(profile: ProfileT, capture: Pick<ProfileChunk, 'contexts' | 'timestampsUs' | 'notInSpan'>): ProfileChunk {
  return { profile, packed: undefined, claimed: false, samples: profile.sample.length, ...capture };
}

/**
 * Pack a chunk's profile (see {@link PackedChunk}), yielding every few
 * hundred entries; the chunk keeps its profile until the packing is whole.
 * Stops early, leaving the chunk as it was, once the chunk is claimed by its
 * window's build.
 */
export function* packSteps(chunk: ProfileChunk): Steps<void> {
  const p = chunk.profile;
  if (p === undefined || chunk.claimed) return;
  const packed = yield* packProfile(p, () => chunk.claimed);
  if (packed === undefined || chunk.claimed) return;
  chunk.packed = packed;
  chunk.profile = undefined;
}

function* packProfile(p: ProfileT, stop: () => boolean): Steps<PackedChunk | undefined> {
  const fns = p.function;
  const functions = new Int32Array(fns.length * 3);
  for (let i = 0; i < fns.length; i++) {
    const f = fns[i] as PprofFunction;
    functions[i * 3] = Number(f.id);
    functions[i * 3 + 1] = Number(f.name);
    functions[i * 3 + 2] = Number(f.filename);
  }
  const locs = p.location;
  const locations = new Int32Array(locs.length * 3);
  for (let i = 0; i < locs.length; i++) {
    const l = locs[i] as Location;
    const line = l.line[0];
    locations[i * 3] = Number(l.id);
    locations[i * 3 + 1] = Number(line?.functionId ?? 0);
    locations[i * 3 + 2] = Number(line?.line ?? 0);
  }
  yield;
  if (stop()) return undefined;
  const samples = p.sample;
  const n = samples.length;
  const valuesPerSample = p.sampleType.length;
  let frames = 0;
  for (let i = 0; i < n; i++) frames += (samples[i] as Sample).locationId.length;
  const stackStart = new Int32Array(n + 1);
  const stacks = new Int32Array(frames);
  const values = new Float64Array(n * valuesPerSample);
  const contextIndexes = new Int32Array(n);
  const ctxKey = p.stringTable.strings.indexOf(LABEL_CONTEXT_INDEX);
  let at = 0;
  for (let i = 0; i < n; i++) {
    const s = samples[i] as Sample;
    stackStart[i] = at;
    const ids = s.locationId;
    for (let j = 0; j < ids.length; j++) stacks[at++] = Number(ids[j]);
    const v = s.value;
    for (let j = 0; j < valuesPerSample; j++) values[i * valuesPerSample + j] = Number(v[j] ?? 0);
    contextIndexes[i] = contextIndex(s.label, ctxKey) ?? -1;
    if ((i + 1) % STEP_ENTRIES === 0) {
      yield;
      if (stop()) return undefined;
    }
  }
  stackStart[n] = at;
  return {
    strings: p.stringTable.strings,
    functions,
    locations,
    stackStart,
    stacks,
    values,
    valuesPerSample,
    contextIndex: contextIndexes,
  };
}

/**
 * The label callback for one native stop. It does as little as possible
 * while the event loop is held: per sample, one numeric label (an index) and
 * two array pushes. Building the real labels is left to the sliced assembly.
 * Runs inside @datadog/pprof's serializer: it never throws.
 */
export function chunkCapture(): {
  chunk: Pick<ProfileChunk, 'contexts' | 'timestampsUs' | 'notInSpan'>;
  labels: (args: GenerateTimeLabelsArgs) => LabelSet;
} {
  const contexts: unknown[] = [];
  const timestampsUs: number[] = [];
  const notInSpan: boolean[] = [];
  const none: LabelSet = {};
  return {
    chunk: { contexts, timestampsUs, notInSpan },
    labels: ({ node, context }) => {
      if (context === undefined) return none;
      const c = context as CapturedContext;
      const i = contexts.length;
      contexts.push(c.context);
      timestampsUs.push(Number(c.timestamp));
      notInSpan.push(NOT_IN_SPAN.has(node.name ?? ''));
      return { [LABEL_CONTEXT_INDEX]: i };
    },
  };
}

/**
 * Build the window's wall profile from its chunks, yielding every few hundred
 * samples. The last chunk (the stop at the close) is the base: its tables
 * are kept as they are and the earlier chunks' strings, functions and
 * locations are merged into them; samples stay in time order. Every sample gets
 * the labels of DESIGN.md: thread id and name; with a span, its trace id,
 * span id, flags, name (read now, so a renamed span shows its final name)
 * and local root; with a context, its timestamp. Label objects are built
 * once per span and shared by its samples.
 */
export function* assembleSteps(
  chunks: readonly ProfileChunk[],
  thread: ThreadIdentity,
  window: { readonly startUnixNs: bigint; readonly endUnixNs: bigint },
): Steps<ProfileT> {
  const last = chunks[chunks.length - 1];
  const out = last?.profile;
  if (last === undefined || out === undefined) throw new Error('a window needs its closing stop as a native profile');
  // The span labels add a few strings per span: keep them as strings only.
  const table = new LazyStringTable(out.stringTable.strings);
  out.stringTable = table;
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
  // Label arrays are made at their final length: a push past an array's
  // length grows its store by half again plus 16 slots, and these arrays
  // live as long as the window. A span's array has a last slot for the
  // timestamp: its first sample takes the array itself, later ones a copy
  // (under span load most spans have one or two samples in a window, and
  // an array kept only to be copied was ~90 bytes per span).
  const spanLabels = (s: SampleContext): Label[] => {
    let set = bySample.get(s);
    if (set === undefined) {
      const name = sampleName(s);
      const root = s.localRootSpanId;
      set = new Array<Label>(6 + (name === undefined ? 0 : 1) + (root === undefined ? 0 : 1));
      set[0] = threadLabels[0] as Label;
      set[1] = threadLabels[1] as Label;
      set[2] = new Label({ key: key.traceId, str: table.dedup(s.traceId) });
      set[3] = new Label({ key: key.spanId, str: table.dedup(s.spanId) });
      set[4] = shared(flagLabels, key.flags, table.dedup(flagsHex(s.traceFlags)));
      let i = 5;
      if (name !== undefined) set[i++] = shared(nameLabels, key.spanName, table.dedup(name));
      if (root !== undefined) set[i] = new Label({ key: key.localRoot, str: table.dedup(root) });
      bySample.set(s, set);
    }
    return set;
  };
  const labelsOf = (chunk: ProfileChunk, index: number | undefined): Label[] => {
    if (index === undefined || index >= chunk.contexts.length) return threadLabels;
    // spanfuse binds span-table ids or SampleContexts; a Span or a Context (other callers) resolves too.
    const s = resolveSample(chunk.contexts[index]);
    const inSpan = s.spanId !== '' && chunk.notInSpan[index] !== true;
    const ts = new Label({ key: key.ts, num: BigInt(chunk.timestampsUs[index] ?? 0) * 1000n });
    let out: Label[];
    if (inSpan) {
      const set = spanLabels(s);
      const last = set.length - 1;
      if (set[last] === undefined) {
        set[last] = ts;
        return set;
      }
      // A copy (no spread: this code runs once per window, interpreted,
      // where a spread allocates an iterator result per element).
      out = new Array<Label>(set.length);
      for (let i = 0; i < last; i++) out[i] = set[i] as Label;
      out[last] = ts;
    } else {
      out = new Array<Label>(3);
      out[0] = threadLabels[0] as Label;
      out[1] = threadLabels[1] as Label;
      out[2] = ts;
    }
    return out;
  };

  // Earlier chunks first: merge their tables into the base's, then their
  // samples. Functions are keyed by (name, file) and locations by
  // (function, line), two string-table indices or ids packed in one number
  // (see pairKey). Indexed loops throughout: for-of in this (interpreted)
  // code allocates an iterator result per element.
  let n = 0;
  const earlier: Sample[] = [];
  // Samples with the same stack share one location-id array (see StackPool).
  const pool = new StackPool();
  if (chunks.length > 1) {
    const valuesPerSample = out.sampleType.length;
    const functionIds = new Map<number | string, number>();
    for (let i = 0; i < out.function.length; i++) {
      const f = out.function[i] as PprofFunction;
      functionIds.set(pairKey(Number(f.name), Number(f.filename)), Number(f.id));
    }
    const locationIds = new Map<number | string, number>();
    for (let i = 0; i < out.location.length; i++) {
      const l = out.location[i] as Location;
      const line = l.line[0];
      locationIds.set(pairKey(Number(line?.functionId ?? 0), Number(line?.line ?? 0)), Number(l.id));
    }
    yield;
    for (let c = 0; c < chunks.length - 1; c++) {
      const chunk = chunks[c];
      if (chunk === undefined) continue;
      // Normally packed seconds ago; packed here when the close came first.
      let packed = chunk.packed;
      if (packed === undefined && chunk.profile !== undefined) packed = yield* packProfile(chunk.profile, never);
      if (packed === undefined) continue;
      const strings = packed.strings;
      const str = new Array<number>(strings.length);
      for (let i = 0; i < strings.length; i++) {
        str[i] = table.dedup(strings[i] as string);
        if ((i + 1) % STEP_ENTRIES === 0) yield;
      }
      const fns = packed.functions;
      const fnMap = new Map<number, number>();
      for (let i = 0; i < fns.length; i += 3) {
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
        if ((i + 3) % (3 * STEP_ENTRIES) === 0) yield;
      }
      const locs = packed.locations;
      const locMap = new Map<number, number>();
      for (let i = 0; i < locs.length; i += 3) {
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
        if ((i + 3) % (3 * STEP_ENTRIES) === 0) yield;
      }
      yield;
      const { stackStart, stacks, values, contextIndex: ctx } = packed;
      const vps = packed.valuesPerSample;
      const samples = stackStart.length - 1;
      for (let i = 0; i < samples; i++) {
        const locationId = pool.fromPacked(stacks, stackStart[i] as number, stackStart[i + 1] as number, locMap);
        const value = new Array<number>(valuesPerSample);
        for (let j = 0; j < valuesPerSample; j++) value[j] = j < vps ? (values[i * vps + j] as number) : 0;
        const at = ctx[i] as number;
        earlier.push(sampleOf(locationId, value, labelsOf(chunk, at >= 0 ? at : undefined)));
        if (++n % STEP_ENTRIES === 0) yield;
      }
    }
  }

  // The closing stop: relabel its samples in place.
  const ctxKey = table.strings.indexOf(LABEL_CONTEXT_INDEX);
  const own = out.sample;
  for (let i = 0; i < own.length; i++) {
    const s = own[i] as Sample;
    s.label = labelsOf(last, contextIndex(s.label, ctxKey));
    s.locationId = pool.of(s.locationId);
    if (++n % STEP_ENTRIES === 0) yield;
  }
  if (earlier.length > 0) out.sample = earlier.concat(own);
  out.timeNanos = window.startUnixNs;
  out.durationNanos = window.endUnixNs - window.startUnixNs;
  return out;
}

const never = (): boolean => false;

/** Two non-negative integers as one map key: a number while exact (a < 2^21, b < 2^32), else a string. */
function pairKey(a: number, b: number): number | string {
  return a < 0x200000 && b < 0x100000000 ? a * 0x100000000 + b : `${a}:${b}`;
}

function contextIndex(labels: readonly Label[], key: number): number | undefined {
  if (key <= 0) return undefined;
  const l = findLabel(labels, key);
  return l === undefined ? undefined : Number(l.num);
}

/** `trace_flags` as two hex digits; the 256 strings are made once. */
const FLAGS_HEX: readonly string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

function flagsHex(flags: number): string {
  return (Number.isInteger(flags) && flags >= 0 && flags <= 255 ? FLAGS_HEX[flags] : undefined) ?? flags.toString(16).padStart(2, '0');
}
