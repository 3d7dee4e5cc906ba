import { FRAME_GARBAGE_COLLECTION, LABEL_LOCAL_ROOT_SPAN_ID, LABEL_SPAN_ID } from '../core/labels.js';
import type { WindowProfile } from '../core/window.js';
import { runSync } from '../core/slices.js';
import type { Steps } from '../core/slices.js';

type Profile = WindowProfile['wall'];
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
  /** Leaf frame -> samples. Keys are location ids of one window ({@link WindowAggregates.frameName}). */
  readonly frames: Map<number, number>;
}

/** Per-span figures of one closed window. */
export interface WindowAggregates {
  readonly profileId: string;
  readonly startUnixNs: bigint;
  readonly endUnixNs: bigint;
  /** False when the window has no `cpu/nanoseconds` values. */
  readonly hasCpu: boolean;
  readonly bySpan: ReadonlyMap<string, SampleFigures>;
  /** Keyed by `local_root_span_id`: all samples of a local trace subtree. */
  readonly byLocalRoot: ReadonlyMap<string, SampleFigures>;
  /** Spans left out because the window had more than the cap. */
  readonly spansDropped: number;
  /**
   * `name (file:line)` of a leaf location of this window, the file's base
   * name only (a full path can carry user or host names). Resolved only for
   * the few spans that are released, not per sample.
   */
  frameName(locationId: number): string;
}

export function emptyFigures(): SampleFigures {
  return { samples: 0, wallNs: 0, cpuNs: 0, gcNs: 0, frames: new Map() };
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
const STEP_SAMPLES = 512;

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
    for (const sample of profile.sample) {
      if (++n % STEP_SAMPLES === 0) yield;
      let spanId: string | undefined;
      let rootId: string | undefined;
      for (const label of sample.label) {
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
      if (rootId !== undefined && rootId !== '') {
        const f = figuresFor(byLocalRoot, rootId, maxSpans);
        if (f === undefined) spansDropped++;
        else add(f, count, sampledWall, cpu, leaf, gc);
      }
    }
  }
  return {
    profileId: window.profileId,
    startUnixNs: window.startUnixNs,
    endUnixNs: window.endUnixNs,
    hasCpu: cpuIdx >= 0,
    bySpan,
    byLocalRoot,
    spansDropped,
    frameName: frameNamer(profile),
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
  if (leaf >= 0 && count > 0) f.frames.set(leaf, (f.frames.get(leaf) ?? 0) + count);
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
  for (const loc of profile.location) {
    const line = loc.line[0];
    if (line !== undefined && gcFunctions.has(Number(line.functionId))) out.add(Number(loc.id));
  }
  return out;
}

/**
 * Resolves location ids to names on demand. It keeps the location and
 * function tables and the strings of this window (not its samples) alive for
 * as long as the aggregates are kept: one window.
 */
function frameNamer(profile: Profile): (id: number) => string {
  const strings = profile.stringTable.strings;
  const locationList = profile.location;
  const functionList = profile.function;
  let locations: Map<number, (typeof locationList)[number]> | undefined;
  let functions: Map<number, (typeof functionList)[number]> | undefined;
  return (id) => {
    locations ??= new Map(locationList.map((l) => [Number(l.id), l]));
    functions ??= new Map(functionList.map((f) => [Number(f.id), f]));
    const line = locations.get(id)?.line[0];
    const fn = line === undefined ? undefined : functions.get(Number(line.functionId));
    if (fn === undefined) return '(unknown)';
    const name = strings[Number(fn.name)] || '(anonymous)';
    const file = baseName(strings[Number(fn.filename)] ?? '');
    const lineNo = Number(line?.line ?? 0);
    return file === '' ? name : lineNo > 0 ? `${name} (${file}:${lineNo})` : `${name} (${file})`;
  };
}

function baseName(path: string): string {
  const i = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  return i < 0 ? path : path.slice(i + 1);
}
