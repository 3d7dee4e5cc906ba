import { FRAME_GARBAGE_COLLECTION, LABEL_LOCAL_ROOT_SPAN_ID, LABEL_SPAN_ID } from '../core/labels.js';
import type { WindowProfile } from '../core/window.js';
import { runSync } from '../core/slices.js';
import type { Steps } from '../core/slices.js';

type Profile = WindowProfile['wall'];
type Sample = Profile['sample'][number];
type Label = Sample['label'][number];
type Location = Profile['location'][number];
type Numeric = number | bigint;

/** What the samples of one span (or one local subtree) in one window add up to. */
export interface SampleFigures {
  /** Samples taken (sample/count). */
  samples: number;
  /**
   * Sampled wall time: samples x the configured sampling interval. Not the
   * profile's own `wall/nanoseconds` values: @datadog/pprof sets those to a
   * window-wide average interval (window length / all hits, up to 2x the
   * configured one), which can put more wall time on a span than it lasted.
   */
  wallNs: number;
  /** Thread CPU time measured at each sample (cpu/nanoseconds). */
  cpuNs: number;
  /** Sampled wall time of samples whose leaf frame is `Garbage Collection`. */
  gcNs: number;
  /**
   * The first leaf frame seen (a location id of one window, see
   * {@link WindowAggregates.frameName}; -1: none yet) and its samples. Read
   * through {@link forEachLeaf}.
   */
  leaf: number;
  leafSamples: number;
  /**
   * Other leaf frames -> samples; made only for an id with more than one
   * distinct leaf in the window. Most sampled spans have one or two samples
   * per window: a Map (with its hash table) for each of them was ~70% of what
   * the tail stage keeps of a window until the next one closes (heap snapshot,
   * 2,500 spans/s: 390 of 530 KB, promoted to the old generation every window).
   */
  more: Map<number, number> | undefined;
}

/** Calls `fn` with each leaf location id of `f` and its samples. */
export function forEachLeaf(f: SampleFigures, fn: (location: number, samples: number) => void): void {
  if (f.leaf >= 0) fn(f.leaf, f.leafSamples);
  if (f.more !== undefined) for (const [loc, n] of f.more) fn(loc, n);
}

/** Per-span figures of one closed window. */
export interface WindowAggregates {
  readonly profileId: string;
  readonly startUnixNs: bigint;
  readonly endUnixNs: bigint;
  /** False when the window has no `cpu/nanoseconds` values. */
  readonly hasCpu: boolean;
  readonly bySpan: ReadonlyMap<string, SampleFigures>;
  /**
   * Keyed by `local_root_span_id`: the samples of a local trace subtree
   * other than its root span's own, which are in `bySpan` under the same id
   * (the subtree's figures are the two together). A root span's samples are
   * not kept twice: most sampled spans of a service are roots, and the
   * figures outlive their window by one more (surviving two scavenges).
   */
  readonly byLocalRoot: ReadonlyMap<string, SampleFigures>;
  /** Spans left out because the window had more than the cap. */
  readonly spansDropped: number;
  /**
   * `name (file:line)` of a leaf location of this window, the file's base
   * name only (a full path can carry user or host names), or `(unknown)`.
   * Names are built once per window for the distinct leaves of labelled
   * samples, not per sample.
   */
  frameName(locationId: number): string;
}

export function emptyFigures(): SampleFigures {
  return { samples: 0, wallNs: 0, cpuNs: 0, gcNs: 0, leaf: -1, leafSamples: 0, more: undefined };
}

/**
 * One pass over the wall profile of a window: figures per span id and per
 * local root span id. At most `maxSpans` distinct ids of each kind are kept.
 * Costs a few Map operations per labelled sample; names are not built here.
 */
export function aggregateWindow(window: WindowProfile, maxSpans: number): WindowAggregates {
  return runSync(aggregateSteps(window, maxSpans));
}

/** Samples aggregated between two yields of {@link aggregateSteps}. */
const STEP_SAMPLES = 256;

/** {@link aggregateWindow} in steps: yields every few hundred samples. */
export function* aggregateSteps(window: WindowProfile, maxSpans: number): Steps<WindowAggregates> {
  const profile = window.wall;
  const strings = profile.stringTable.strings;
  const spanKey = strings.indexOf(LABEL_SPAN_ID);
  const rootKey = strings.indexOf(LABEL_LOCAL_ROOT_SPAN_ID);
  const countIdx = sampleTypeIndex(profile, 'sample');
  const wallIdx = sampleTypeIndex(profile, 'wall');
  const cpuIdx = sampleTypeIndex(profile, 'cpu');
  const intervalNs = window.samplingIntervalMicros * 1000;
  const bySpan = new Map<string, SampleFigures>();
  const byLocalRoot = new Map<string, SampleFigures>();
  let spansDropped = 0;
  const gcLocations = garbageCollectionLocations(profile);

  if (spanKey > 0 || rootKey > 0) {
    let n = 0;
    // Indexed loops: this runs once per window, interpreted, where for-of
    // allocates an iterator result per element.
    const samples = profile.sample;
    for (let i = 0; i < samples.length; i++) {
      if (++n % STEP_SAMPLES === 0) yield;
      const sample = samples[i] as Sample;
      let spanId: string | undefined;
      let rootId: string | undefined;
      const labels = sample.label;
      for (let j = 0; j < labels.length; j++) {
        const label = labels[j] as Label;
        const k = Number(label.key);
        if (k === spanKey) spanId = strings[Number(label.str)];
        else if (k === rootKey) rootId = strings[Number(label.str)];
      }
      if (spanId === undefined && rootId === undefined) continue;
      const values = sample.value;
      const count = value(values, countIdx);
      const wall = value(values, wallIdx);
      const cpu = value(values, cpuIdx);
      if (count === 0 && wall === 0 && cpu === 0) continue;
      const sampledWall = intervalNs > 0 ? count * intervalNs : wall;
      const leafRaw = sample.locationId[0];
      const leaf = leafRaw === undefined ? -1 : Number(leafRaw);
      const gc = leaf >= 0 && gcLocations.has(leaf);
      if (spanId !== undefined && spanId !== '') {
        const f = figuresFor(bySpan, spanId, maxSpans);
        if (f === undefined) spansDropped++;
        else add(f, count, sampledWall, cpu, leaf, gc);
      }
      if (rootId !== undefined && rootId !== '' && rootId !== spanId) {
        const f = figuresFor(byLocalRoot, rootId, maxSpans);
        if (f === undefined) spansDropped++;
        else add(f, count, sampledWall, cpu, leaf, gc);
      }
    }
  }
  yield;
  return {
    profileId: window.profileId,
    startUnixNs: window.startUnixNs,
    endUnixNs: window.endUnixNs,
    hasCpu: cpuIdx >= 0,
    bySpan,
    byLocalRoot,
    spansDropped,
    frameName: frameNamer(profile, [bySpan, byLocalRoot]),
  };
}

function figuresFor(map: Map<string, SampleFigures>, id: string, max: number): SampleFigures | undefined {
  let f = map.get(id);
  if (f === undefined) {
    if (map.size >= max) return undefined;
    f = emptyFigures();
    map.set(id, f);
  }
  return f;
}

function add(f: SampleFigures, count: number, wall: number, cpu: number, leaf: number, gc: boolean): void {
  f.samples += count;
  f.wallNs += wall;
  f.cpuNs += cpu;
  if (gc) f.gcNs += wall;
  if (leaf < 0 || count <= 0) return;
  if (f.leaf === leaf) f.leafSamples += count;
  else if (f.leaf < 0) {
    f.leaf = leaf;
    f.leafSamples = count;
  } else {
    f.more ??= new Map();
    f.more.set(leaf, (f.more.get(leaf) ?? 0) + count);
  }
}

function value(values: Numeric[], idx: number): number {
  if (idx < 0) return 0;
  const v = values[idx];
  return v === undefined ? 0 : Number(v);
}

function sampleTypeIndex(profile: Profile, type: string): number {
  const strings = profile.stringTable.strings;
  return profile.sampleType.findIndex((t) => strings[Number(t.type)] === type);
}

/** Ids of locations whose (leaf) function is the runtime's `Garbage Collection`. */
function garbageCollectionLocations(profile: Profile): Set<number> {
  const strings = profile.stringTable.strings;
  const gcFunctions = new Set<number>();
  for (const fn of profile.function) if (strings[Number(fn.name)] === FRAME_GARBAGE_COLLECTION) gcFunctions.add(Number(fn.id));
  const out = new Set<number>();
  if (gcFunctions.size === 0) return out;
  const locations = profile.location;
  for (let i = 0; i < locations.length; i++) {
    const loc = locations[i] as Location;
    const line = loc.line[0];
    if (line !== undefined && gcFunctions.has(Number(line.functionId))) out.add(Number(loc.id));
  }
  return out;
}

/**
 * Names of the leaf locations the figures point at (and only those),
 * resolved now: the aggregates outlive the window by one more window (see
 * TailSpanProcessor), and a namer reading the window's tables would keep its
 * whole string table (every span's ids) and its location and function lists
 * alive that long. Only the map of names is kept.
 */
function frameNamer(profile: Profile, figures: readonly ReadonlyMap<string, SampleFigures>[]): (id: number) => string {
  const names = leafNames(profile, figures);
  return (id) => names.get(id) ?? '(unknown)';
}

function leafNames(profile: Profile, figures: readonly ReadonlyMap<string, SampleFigures>[]): Map<number, string> {
  const leaves = new Set<number>();
  for (const byId of figures) for (const f of byId.values()) forEachLeaf(f, (location) => leaves.add(location));
  const strings = profile.stringTable.strings;
  const functions = new Map(profile.function.map((fn) => [Number(fn.id), fn]));
  const names = new Map<number, string>();
  const locations = profile.location;
  for (let i = 0; i < locations.length; i++) {
    const loc = locations[i] as Location;
    const id = Number(loc.id);
    const line = loc.line[0];
    if (line === undefined || !leaves.has(id)) continue;
    const fn = functions.get(Number(line.functionId));
    if (fn === undefined) continue;
    const name = strings[Number(fn.name)] || '(anonymous)';
    const file = baseName(strings[Number(fn.filename)] ?? '');
    const lineNo = Number(line.line ?? 0);
    names.set(id, file === '' ? name : lineNo > 0 ? `${name} (${file}:${lineNo})` : `${name} (${file})`);
  }
  return names;
}

function baseName(path: string): string {
  const i = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  return i < 0 ? path : path.slice(i + 1);
}
