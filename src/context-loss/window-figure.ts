import type { Profile } from '../core/pprof.js';
import { FRAME_GARBAGE_COLLECTION, LABEL_SPAN_ID, LABEL_TIMESTAMP_NS } from '../core/labels.js';
import type { InFlightTimeline } from './in-flight.js';
import { busyAt } from './in-flight.js';

export interface LostFunction {
  readonly name: string;
  readonly samples: number;
  /** Of the window's unattributed samples. */
  readonly share: number;
}

export interface LostStack {
  /** Leaf first, ` < ` between frames, at most STACK_DEPTH frames. */
  readonly stack: string;
  readonly samples: number;
}

/** Context loss of one window on one thread. */
export interface ContextLoss {
  /** Samples of JS running (not idle, not GC) in the window. */
  readonly cpuSamples: number;
  /** Of those, taken while at least one span was in flight on the thread. */
  readonly inFlightSamples: number;
  /** Of those, carrying no span: work that lost its context. */
  readonly unattributedSamples: number;
  /** unattributed / inFlight (0 when nothing was in flight). */
  readonly share: number;
  readonly topFunctions: readonly LostFunction[];
  readonly topStacks: readonly LostStack[];
  /** More span transitions than kept: the oldest part of the window is a guess. */
  readonly approximate: boolean;
}

const TOP = 5;
const STACK_DEPTH = 6;
/** Leaves that are not JS work: the thread waited, or V8 ran its own code. */
const NOT_CPU = new Set(['(idle)', '(program)', FRAME_GARBAGE_COLLECTION, '(garbage collector)']);

/**
 * One pass over the window's samples. A sample counts as lost context when
 * it is JS work, carries no span, and was taken (its `end_timestamp_ns`)
 * while spans were in flight on this thread. Functions and stacks are named
 * from the first frame, counted from the leaf, that is app code (has a file
 * and is not a `node:` builtin), so `performance.now` or `readFileSync` does
 * not hide the caller that lost the context.
 */
export function contextLoss(profile: Profile, timeline: InFlightTimeline): ContextLoss {
  const strings = profile.stringTable.strings;
  const spanKey = strings.indexOf(LABEL_SPAN_ID);
  const tsKey = strings.indexOf(LABEL_TIMESTAMP_NS);
  const types = profile.sampleType.map((t) => strings[Number(t.type)] ?? '');
  const iCount = Math.max(0, types.indexOf('sample'));
  let locations: Map<string, { name: string; app: boolean }[]> | undefined;
  const byFunction = new Map<string, number>();
  const byStack = new Map<string, number>();
  let cpu = 0;
  let inFlight = 0;
  let lost = 0;
  // Indexed loops: once per window, interpreted, where for-of allocates an
  // iterator result per element.
  const samples = profile.sample;
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i] as Profile['sample'][number];
    const n = Number(s.value[iCount] ?? 0);
    if (n === 0) continue;
    let hasSpan = false;
    let tsMs = Number.NaN;
    const labels = s.label;
    for (let j = 0; j < labels.length; j++) {
      const l = labels[j] as Profile['sample'][number]['label'][number];
      const k = Number(l.key);
      if (k === spanKey && spanKey > 0) hasSpan = true;
      else if (k === tsKey && tsKey > 0) tsMs = Number(l.num) / 1e6;
    }
    locations ??= locationFrames(profile);
    const leaf = s.locationId.length > 0 ? locations.get(String(s.locationId[0]))?.[0] : undefined;
    if (leaf === undefined || NOT_CPU.has(leaf.name)) continue;
    cpu += n;
    if (!busyAt(timeline, Number.isNaN(tsMs) ? 0 : tsMs)) continue;
    inFlight += n;
    if (hasSpan) continue;
    lost += n;
    const frames = framesOf(s.locationId, locations);
    let first = frames.findIndex((f) => f.app);
    if (first < 0) first = 0;
    const name = frames[first]?.name ?? '?';
    byFunction.set(name, (byFunction.get(name) ?? 0) + n);
    const stack = frames
      .slice(first, first + STACK_DEPTH)
      .map((f) => f.name)
      .join(' < ');
    byStack.set(stack, (byStack.get(stack) ?? 0) + n);
  }
  return {
    cpuSamples: cpu,
    inFlightSamples: inFlight,
    unattributedSamples: lost,
    share: inFlight === 0 ? 0 : lost / inFlight,
    topFunctions: top(byFunction).map(([name, samples]) => ({ name, samples, share: lost === 0 ? 0 : samples / lost })),
    topStacks: top(byStack).map(([stack, samples]) => ({ stack, samples })),
    approximate: timeline.overflowed,
  };
}

function top(m: Map<string, number>): [string, number][] {
  return [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, TOP);
}

function framesOf(ids: readonly (number | bigint)[], locations: Map<string, { name: string; app: boolean }[]>): { name: string; app: boolean }[] {
  const out: { name: string; app: boolean }[] = [];
  for (const id of ids) {
    const f = locations.get(String(id));
    if (f) for (const x of f) out.push(x);
  }
  return out;
}

/** Location id -> its frames (inlined first), named, and whether app code. */
function locationFrames(p: Profile): Map<string, { name: string; app: boolean }[]> {
  const strings = p.stringTable.strings;
  const fns = new Map<string, { name: string; app: boolean }>();
  for (const f of p.function) {
    const file = strings[Number(f.filename)] ?? '';
    const name = strings[Number(f.name)] ?? '';
    fns.set(String(f.id), { name: name === '' ? '(anonymous)' : name, app: file !== '' && !file.startsWith('node:') });
  }
  const out = new Map<string, { name: string; app: boolean }[]>();
  for (const l of p.location) out.set(String(l.id), l.line.map((ln) => fns.get(String(ln.functionId)) ?? { name: '?', app: false }));
  return out;
}
