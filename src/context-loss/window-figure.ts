import { sampleTimes, sampleTimeUs } from '../core/pprof.js';
import type { Profile } from '../core/pprof.js';
import { FRAME_GARBAGE_COLLECTION, LABEL_SPAN_ID, LABEL_TIMESTAMP_NS } from '../core/labels.js';
import type { InFlightTimeline } from './in-flight.js';
import { busyAt } from './in-flight.js';
import { IdIndex, LeafFunctionTest, sampleTypeIndex } from '../core/profile-index.js';
import { runSync, stepEvery, STEP_ENTRIES } from '../core/slices.js';
import type { Steps } from '../core/slices.js';

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
  return runSync(contextLossSteps(profile, timeline));
}

/**
 * {@link contextLoss} in steps: yields every few hundred samples. Per sample
 * it reads the labels and whether the leaf frame is JS work (known once per
 * distinct leaf location); frames are named only for the samples that lost
 * their context, which are few.
 */
export function* contextLossSteps(profile: Profile, timeline: InFlightTimeline): Steps<ContextLoss> {
  const strings = profile.stringTable.strings;
  const spanKey = strings.indexOf(LABEL_SPAN_ID);
  const tsKey = strings.indexOf(LABEL_TIMESTAMP_NS);
  const iCount = Math.max(0, sampleTypeIndex(profile, 'sample'));
  const frames = new FrameIndex(profile);
  const work = new LeafFunctionTest(profile, (name) => !NOT_CPU.has(name));
  const byFunction = new Map<string, number>();
  const byStack = new Map<string, number>();
  let cpu = 0;
  let inFlight = 0;
  let lost = 0;
  const due = stepEvery(STEP_ENTRIES);
  // Indexed loops: once per window, interpreted, where for-of allocates an
  // iterator result per element.
  const samples = profile.sample;
  // Times kept beside the samples (see SampleTimes), else their labels.
  const times = sampleTimes(profile);
  for (let i = 0; i < samples.length; i++) {
    if (due()) yield;
    const s = samples[i] as Profile['sample'][number];
    const n = Number(s.value[iCount] ?? 0);
    if (n === 0 || s.locationId.length === 0 || !work.has(Number(s.locationId[0]))) continue;
    let hasSpan = false;
    let tsMs = sampleTimeUs(times, i) / 1000;
    const labels = s.label;
    for (let j = 0; j < labels.length; j++) {
      const l = labels[j] as Profile['sample'][number]['label'][number];
      const k = Number(l.key);
      if (k === spanKey && spanKey > 0) hasSpan = true;
      else if (k === tsKey && tsKey > 0) tsMs = Number(l.num) / 1e6;
    }
    cpu += n;
    if (!busyAt(timeline, Number.isNaN(tsMs) ? 0 : tsMs)) continue;
    inFlight += n;
    if (hasSpan) continue;
    lost += n;
    const stack = frames.stackOf(s.locationId);
    let first = stack.findIndex((f) => f.app);
    if (first < 0) first = 0;
    const name = stack[first]?.name ?? '?';
    byFunction.set(name, (byFunction.get(name) ?? 0) + n);
    const key = stack
      .slice(first, first + STACK_DEPTH)
      .map((f) => f.name)
      .join(' < ');
    byStack.set(key, (byStack.get(key) ?? 0) + n);
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

interface Frame {
  readonly name: string;
  /** Has a file that is not a `node:` builtin. */
  readonly app: boolean;
}

const UNKNOWN_FRAME: Frame = { name: '?', app: false };

/**
 * The frames of one profile's locations, resolved on demand (for the samples
 * that lost their context): nothing is made for a location or function that
 * no such sample names.
 */
class FrameIndex {
  readonly #p: Profile;
  readonly #strings: readonly string[];
  readonly #locations: IdIndex;
  readonly #functions: IdIndex;
  readonly #frames = new Map<number, Frame>();

  constructor(p: Profile) {
    this.#p = p;
    this.#strings = p.stringTable.strings;
    this.#locations = new IdIndex(p.location);
    this.#functions = new IdIndex(p.function);
  }

  /** The frames of a stack, leaf first, inlined frames first within a location. */
  stackOf(ids: readonly (number | bigint)[]): Frame[] {
    const out: Frame[] = [];
    for (let i = 0; i < ids.length; i++) {
      const at = this.#locations.at(Number(ids[i]));
      const lines = at < 0 ? undefined : this.#p.location[at]?.line;
      if (lines === undefined) continue;
      for (let j = 0; j < lines.length; j++) out.push(this.#frame(Number(lines[j]?.functionId)) ?? UNKNOWN_FRAME);
    }
    return out;
  }

  #frame(functionId: number): Frame | undefined {
    let f = this.#frames.get(functionId);
    if (f !== undefined) return f;
    const fn = this.#p.function[this.#functions.at(functionId)];
    if (fn === undefined) return undefined;
    const name = this.#strings[Number(fn.name)] ?? '';
    const file = this.#strings[Number(fn.filename)] ?? '';
    f = { name: name === '' ? '(anonymous)' : name, app: file !== '' && !file.startsWith('node:') };
    this.#frames.set(functionId, f);
    return f;
  }
}
