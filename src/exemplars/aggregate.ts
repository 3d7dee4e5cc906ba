import { FRAME_GARBAGE_COLLECTION, LABEL_LOCAL_ROOT_SPAN_ID, LABEL_SPAN_ID } from '../core/labels.js';
import type { WindowProfile } from '../core/window.js';
import { runSync, STEP_ENTRIES, stepEvery } from '../core/slices.js';
import { FiguresTable } from './figures-table.js';
import { IdIndex, LeafFunctionTest, sampleTypeIndex } from '../core/profile-index.js';
import type { Steps } from '../core/slices.js';

type Profile = WindowProfile['wall'];
type Sample = Profile['sample'][number];
type Label = Sample['label'][number];
type Numeric = number | bigint;

/** Per-span figures of one closed window. */
export interface WindowAggregates {
  readonly profileId: string;
  readonly startUnixNs: bigint;
  readonly endUnixNs: bigint;
  /** False when the window has no `cpu/nanoseconds` values. */
  readonly hasCpu: boolean;
  /**
   * By `span_id`: samples, sampled wall time (samples x the configured
   * sampling interval, not the profile's own `wall/nanoseconds`, which
   * @datadog/pprof sets to a window-wide average interval that can put more
   * wall time on a span than it lasted), thread CPU time measured at each
   * sample, sampled wall time of samples whose leaf frame is `Garbage
   * Collection`, and leaf locations (see {@link frameName}) with their
   * samples.
   */
  readonly bySpan: FiguresTable;
  /**
   * Keyed by `local_root_span_id`: the samples of a local trace subtree
   * other than its root span's own, which are in `bySpan` under the same id
   * (the subtree's figures are the two together). A root span's samples are
   * not kept twice: most sampled spans of a service are roots, and the
   * figures outlive their window by one more (surviving two scavenges).
   */
  readonly byLocalRoot: FiguresTable;
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

/**
 * One pass over the wall profile of a window: figures per span id and per
 * local root span id. At most `maxSpans` distinct ids of each kind are kept.
 * Costs a few Map operations per labelled sample; names are not built here.
 */
export function aggregateWindow(window: WindowProfile, maxSpans: number): WindowAggregates {
  return runSync(aggregateSteps(window, maxSpans));
}

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
  const bySpan = new FiguresTable();
  const byLocalRoot = new FiguresTable();
  let spansDropped = 0;
  const gc = new LeafFunctionTest(profile, (name) => name === FRAME_GARBAGE_COLLECTION);

  if (spanKey > 0 || rootKey > 0) {
    const due = stepEvery(STEP_ENTRIES);
    // Indexed loops: this runs once per window, interpreted, where for-of
    // allocates an iterator result per element.
    const samples = profile.sample;
    for (let i = 0; i < samples.length; i++) {
      if (due()) yield;
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
      const isGc = leaf >= 0 && gc.has(leaf);
      if (spanId !== undefined && spanId !== '') {
        const row = bySpan.findOrAdd(spanId, maxSpans);
        if (row < 0) spansDropped++;
        else bySpan.add(row, count, sampledWall, cpu, leaf, isGc);
      }
      if (rootId !== undefined && rootId !== '' && rootId !== spanId) {
        const row = byLocalRoot.findOrAdd(rootId, maxSpans);
        if (row < 0) spansDropped++;
        else byLocalRoot.add(row, count, sampledWall, cpu, leaf, isGc);
      }
    }
  }
  yield;
  const names = yield* leafNameSteps(profile, [bySpan, byLocalRoot]);
  return {
    profileId: window.profileId,
    startUnixNs: window.startUnixNs,
    endUnixNs: window.endUnixNs,
    hasCpu: cpuIdx >= 0,
    bySpan,
    byLocalRoot,
    spansDropped,
    frameName: (id) => names.get(id) ?? '(unknown)',
  };
}

function value(values: Numeric[], idx: number): number {
  if (idx < 0) return 0;
  const v = values[idx];
  return v === undefined ? 0 : Number(v);
}

/**
 * Names of the leaf locations the figures point at (and only those),
 * resolved now, in steps (a window of 60,000 samples has ~30,000 rows of
 * figures to visit: one 4-5 ms block as a single step): the aggregates
 * outlive the window by one more window (see TailSpanProcessor), and a
 * namer reading the window's tables would keep its whole string table
 * (every span's ids) and its location and function lists alive that long.
 * Only the map of names is kept.
 */
function* leafNameSteps(profile: Profile, figures: readonly FiguresTable[]): Steps<Map<number, string>> {
  const strings = profile.stringTable.strings;
  const locations = new IdIndex(profile.location);
  const functions = new IdIndex(profile.function);
  const names = new Map<number, string>();
  const visit = (id: number): void => {
    if (names.has(id)) return;
    const line = profile.location[locations.at(id)]?.line[0];
    const fn = line === undefined ? undefined : profile.function[functions.at(Number(line.functionId))];
    if (line === undefined || fn === undefined) return;
    const name = strings[Number(fn.name)] || '(anonymous)';
    const file = baseName(strings[Number(fn.filename)] ?? '');
    const lineNo = Number(line.line ?? 0);
    names.set(id, file === '' ? name : lineNo > 0 ? `${name} (${file}:${lineNo})` : `${name} (${file})`);
  };
  const due = stepEvery(STEP_ENTRIES);
  for (let t = 0; t < figures.length; t++) {
    const table = figures[t] as FiguresTable;
    for (let r = 0; r < table.size; r++) {
      if (due()) yield;
      table.forEachLeaf(r, visit);
    }
  }
  return names;
}

function baseName(path: string): string {
  const i = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  return i < 0 ? path : path.slice(i + 1);
}
