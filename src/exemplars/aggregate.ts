import { FRAME_GARBAGE_COLLECTION, LABEL_LOCAL_ROOT_SPAN_ID, LABEL_SPAN_ID } from '../core/labels.js';
import type { WindowProfile } from '../core/window.js';

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
  /** Wall time of samples whose leaf frame is `Garbage Collection`. */
  gcNs: number;
  /** Leaf frame -> samples, for `top_frames`. */
  readonly frames: Map<string, number>;
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
}

export function emptyFigures(): SampleFigures {
  return { samples: 0, wallNs: 0, cpuNs: 0, gcNs: 0, frames: new Map() };
}

/** Add `b` into `a`. */
export function addFigures(a: SampleFigures, b: SampleFigures): void {
  a.samples += b.samples;
  a.wallNs += b.wallNs;
  a.cpuNs += b.cpuNs;
  a.gcNs += b.gcNs;
  for (const [frame, n] of b.frames) a.frames.set(frame, (a.frames.get(frame) ?? 0) + n);
}

interface Leaf {
  readonly frame: string;
  readonly gc: boolean;
}

/**
 * One pass over the wall profile of a window: figures per span id and per
 * local root span id. At most `maxSpans` distinct ids of each kind are kept.
 */
export function aggregateWindow(window: WindowProfile, maxSpans: number): WindowAggregates {
  const profile = window.wall;
  const strings = profile.stringTable.strings;
  const spanKey = strings.indexOf(LABEL_SPAN_ID);
  const rootKey = strings.indexOf(LABEL_LOCAL_ROOT_SPAN_ID);
  const countIdx = sampleTypeIndex(profile, 'sample');
  const wallIdx = sampleTypeIndex(profile, 'wall');
  const cpuIdx = sampleTypeIndex(profile, 'cpu');
  const bySpan = new Map<string, SampleFigures>();
  const byLocalRoot = new Map<string, SampleFigures>();
  let spansDropped = 0;
  const leaves = leafResolver(profile);
  const intervalNs = window.samplingIntervalMicros * 1000;

  if (spanKey > 0 || rootKey > 0) {
    for (const sample of profile.sample) {
      let spanId: string | undefined;
      let rootId: string | undefined;
      for (const label of sample.label) {
        const k = Number(label.key);
        if (k === spanKey) spanId = strings[Number(label.str)];
        else if (k === rootKey) rootId = strings[Number(label.str)];
      }
      if (spanId === undefined && rootId === undefined) continue;
      const count = value(sample.value, countIdx);
      const wall = value(sample.value, wallIdx);
      const cpu = value(sample.value, cpuIdx);
      if (count === 0 && wall === 0 && cpu === 0) continue;
      const sampledWall = intervalNs > 0 ? count * intervalNs : wall;
      const leafId = sample.locationId[0];
      const leaf = leafId === undefined ? undefined : leaves(leafId);
      if (spanId !== undefined && spanId !== '') {
        const f = figuresFor(bySpan, spanId, maxSpans);
        if (f === undefined) spansDropped++;
        else add(f, count, sampledWall, cpu, leaf);
      }
      if (rootId !== undefined && rootId !== '') {
        const f = figuresFor(byLocalRoot, rootId, maxSpans);
        if (f === undefined) spansDropped++;
        else add(f, count, sampledWall, cpu, leaf);
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

function add(f: SampleFigures, count: number, wall: number, cpu: number, leaf: Leaf | undefined): void {
  f.samples += count;
  f.wallNs += wall;
  f.cpuNs += cpu;
  if (leaf === undefined) return;
  if (leaf.gc) f.gcNs += wall;
  if (count > 0) f.frames.set(leaf.frame, (f.frames.get(leaf.frame) ?? 0) + count);
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

/**
 * Location id -> leaf frame description, built once per window and cached:
 * `name (file:line)` with the file's base name only (the full path can
 * carry user or host names; the profile itself keeps it for the scrubber).
 */
function leafResolver(profile: Profile): (id: Numeric) => Leaf | undefined {
  const strings = profile.stringTable.strings;
  let locations: Map<number, (typeof profile.location)[number]> | undefined;
  let functions: Map<number, (typeof profile.function)[number]> | undefined;
  const cache = new Map<number, Leaf | undefined>();
  return (rawId) => {
    const id = Number(rawId);
    if (cache.has(id)) return cache.get(id);
    locations ??= new Map(profile.location.map((l) => [Number(l.id), l]));
    functions ??= new Map(profile.function.map((f) => [Number(f.id), f]));
    const loc = locations.get(id);
    const line = loc?.line[0];
    const fn = line === undefined ? undefined : functions.get(Number(line.functionId));
    let leaf: Leaf | undefined;
    if (fn !== undefined) {
      const name = strings[Number(fn.name)] || '(anonymous)';
      const file = baseName(strings[Number(fn.filename)] ?? '');
      const lineNo = Number(line?.line ?? 0);
      const frame = file === '' ? name : lineNo > 0 ? `${name} (${file}:${lineNo})` : `${name} (${file})`;
      leaf = { frame, gc: name === FRAME_GARBAGE_COLLECTION };
    }
    cache.set(id, leaf);
    return leaf;
  };
}

function baseName(path: string): string {
  const i = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  return i < 0 ? path : path.slice(i + 1);
}
