import type { LabelSet } from '@datadog/pprof';
import type { GenerateTimeLabelsArgs } from '@datadog/pprof/out/src/v8-types.js';
import { findLabel, Label, LazyStringTable, Line, Location, Function as PprofFunction, Sample } from '../core/pprof.js';
import type { Profile as ProfileT } from '../core/pprof.js';
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
 * One stop of the native profiler: its profile with a single cheap label per
 * sample, and the contexts those labels point at. Kept only until the window
 * is assembled, which is past the next scavenge or two: what a chunk holds
 * per sample is kept flat (a context value, mostly a small integer, and a
 * number), not the object @datadog/pprof hands over with its BigInt.
 */
export interface ProfileChunk {
  readonly profile: ProfileT;
  /** Per context: the value the sampler held (a span id in the span table, or an object). */
  readonly contexts: unknown[];
  /** Per context: when it was sampled, µs since the epoch (exact in a double). */
  readonly timestampsUs: number[];
  /** Per context: the sample's leaf frame is `(idle)`/`(program)` (no span code ran). */
  readonly notInSpan: boolean[];
}

/**
 * The label callback for one native stop. It does as little as possible
 * while the event loop is held: per sample, one numeric label (an index) and
 * two array pushes. Building the real labels is left to the sliced assembly.
 * Runs inside @datadog/pprof's serializer: it never throws.
 */
export function chunkCapture(): { chunk: Omit<ProfileChunk, 'profile'>; labels: (args: GenerateTimeLabelsArgs) => LabelSet } {
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

/** Samples handled between two yields of the assembly. */
const STEP_SAMPLES = 128;

/**
 * Build the window's wall profile from its chunks, yielding every few hundred
 * samples. The first chunk's tables are kept as they are; later chunks'
 * strings, functions and locations are merged into them. Every sample gets
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
  const first = chunks[0];
  if (first === undefined) throw new Error('a window needs at least one profile chunk');
  const out = first.profile;
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
  // live as long as the window.
  const spanLabels = (s: SampleContext): Label[] => {
    let set = bySample.get(s);
    if (set === undefined) {
      const name = sampleName(s);
      const root = s.localRootSpanId;
      set = new Array<Label>(5 + (name === undefined ? 0 : 1) + (root === undefined ? 0 : 1));
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
    const base = inSpan ? spanLabels(s) : threadLabels;
    // A copy with one more slot (no spread: this code runs once per window,
    // interpreted, where a spread allocates an iterator result per element).
    const n = base.length;
    const out = new Array<Label>(n + 1);
    for (let i = 0; i < n; i++) out[i] = base[i] as Label;
    out[n] = new Label({ key: key.ts, num: BigInt(chunk.timestampsUs[index] ?? 0) * 1000n });
    return out;
  };

  // The first chunk: relabel its samples in place.
  const firstCtxKey = table.strings.indexOf(LABEL_CONTEXT_INDEX);
  // Indexed loops throughout: for-of in this (interpreted) code allocates an
  // iterator result per element.
  let n = 0;
  const firstSamples = out.sample;
  for (let i = 0; i < firstSamples.length; i++) {
    const s = firstSamples[i] as Sample;
    s.label = labelsOf(first, contextIndex(s.label, firstCtxKey));
    if (++n % STEP_SAMPLES === 0) yield;
  }

  // Later chunks: merge their tables into the first one's, then their samples.
  // Functions are keyed by (name, file) and locations by (function, line),
  // two string-table indices or ids packed in one number (see pairKey).
  if (chunks.length > 1) {
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
    for (let c = 1; c < chunks.length; c++) {
      const chunk = chunks[c];
      if (chunk === undefined) continue;
      const p = chunk.profile;
      const strings = p.stringTable.strings;
      const str = new Array<number>(strings.length);
      for (let i = 0; i < strings.length; i++) {
        str[i] = table.dedup(strings[i] as string);
        if ((i + 1) % STEP_SAMPLES === 0) yield;
      }
      const fnMap = new Map<number, number>();
      for (let i = 0; i < p.function.length; i++) {
        const f = p.function[i] as PprofFunction;
        const name = str[Number(f.name)] ?? 0;
        const file = str[Number(f.filename)] ?? 0;
        const k = pairKey(name, file);
        let id = functionIds.get(k);
        if (id === undefined) {
          id = out.function.length + 1;
          functionIds.set(k, id);
          out.function.push(new PprofFunction({ id, name, systemName: name, filename: file }));
        }
        fnMap.set(Number(f.id), id);
        if ((i + 1) % STEP_SAMPLES === 0) yield;
      }
      const locMap = new Map<number, number>();
      for (let i = 0; i < p.location.length; i++) {
        const l = p.location[i] as Location;
        const line = l.line[0];
        const fn = fnMap.get(Number(line?.functionId ?? 0)) ?? 0;
        const lineNo = line?.line ?? 0;
        const k = pairKey(fn, Number(lineNo));
        let id = locationIds.get(k);
        if (id === undefined) {
          id = out.location.length + 1;
          locationIds.set(k, id);
          out.location.push(new Location({ id, line: [new Line({ functionId: fn, line: lineNo })] }));
        }
        locMap.set(Number(l.id), id);
        if ((i + 1) % STEP_SAMPLES === 0) yield;
      }
      yield;
      const ctxKey = strings.indexOf(LABEL_CONTEXT_INDEX);
      const samples = p.sample;
      for (let i = 0; i < samples.length; i++) {
        const s = samples[i] as Sample;
        const ids = s.locationId;
        const locationId = new Array<number>(ids.length);
        for (let j = 0; j < ids.length; j++) locationId[j] = locMap.get(Number(ids[j])) ?? 0;
        out.sample.push(new Sample({ locationId, value: s.value, label: labelsOf(chunk, contextIndex(s.label, ctxKey)) }));
        if (++n % STEP_SAMPLES === 0) yield;
      }
    }
  }
  out.timeNanos = window.startUnixNs;
  out.durationNanos = window.endUnixNs - window.startUnixNs;
  return out;
}

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
