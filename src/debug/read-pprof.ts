import { Profile, sampleTimes, sampleTimeUs } from '../core/pprof.js';
import type { Profile as ProfileType } from '../core/pprof.js';
import { FlameError, KEYS, metricSlot } from './model.js';
import type { MetricSlot, SampleStore } from './model.js';

/**
 * Add the samples of one pprof profile (already gunzipped) to `store`.
 * Reads spanfuse's wall/CPU windows, its off-CPU windows and pprof from other
 * tools whose sample types are counts, wall, CPU or off-CPU time; span
 * selection works when they carry `span_id`/`trace_id`/`span_name` labels.
 * Returns the number of rows added.
 */
export function addPprof(store: SampleStore, bytes: Uint8Array, source: PprofSource): number {
  let p: ProfileType;
  try {
    p = Profile.decode(bytes);
  } catch (err) {
    throw new FlameError('input', `${source.file}: not a pprof profile (${err instanceof Error ? err.message : String(err)})`);
  }
  return addProfile(store, p, source);
}

export interface PprofSource {
  readonly file: string;
  readonly profileId: string;
  readonly live?: boolean;
  /**
   * Window start (Unix ns) when known from elsewhere (spanfuse's file name,
   * the live window): @datadog/pprof stamps time_nanos when the window is
   * collected, i.e. at its end.
   */
  readonly startNs?: number;
}

/** Same, from a decoded profile (the debug endpoint's live windows). */
export function addProfile(store: SampleStore, p: ProfileType, source: PprofSource): number {
  const strings = p.stringTable.strings;
  const str = (i: number | bigint): string => strings[Number(i)] ?? '';
  const slots: MetricSlot[] = p.sampleType.map((t) => metricSlot(str(t.type), str(t.unit)));
  if (!slots.some((s) => s !== undefined)) {
    const types = p.sampleType.map((t) => `${str(t.type)}/${str(t.unit)}`).join(', ') || 'none';
    throw new FlameError('input', `${source.file}: pprof sample types ${types}; flamegraphs read sample counts, wall, cpu or off_cpu time`);
  }
  const fnFrame = new Map<number, { name: string; file: string; line: number }>();
  for (const f of p.function) fnFrame.set(Number(f.id), { name: str(f.name), file: str(f.filename), line: Number(f.startLine) });
  // Per location: frame ids, root-most first (the last pprof line is the caller).
  const locFrames = new Map<number, number[]>();
  for (const loc of p.location) {
    const ids: number[] = [];
    for (let i = loc.line.length - 1; i >= 0; i--) {
      const fn = fnFrame.get(Number(loc.line[i]?.functionId ?? 0));
      ids.push(store.frame(fn?.name ?? `0x${loc.address.toString(16)}`, fn?.file ?? '', fn?.line ?? 0));
    }
    if (ids.length === 0) ids.push(store.frame(`0x${loc.address.toString(16)}`, '', 0));
    locFrames.set(Number(loc.id), ids);
  }
  const keyOf = new Map<number, string>();
  strings.forEach((s, i) => {
    if (s === KEYS.spanId || s === KEYS.traceId || s === KEYS.spanName || s === KEYS.localRoot || s === KEYS.tailOperation || s === KEYS.tailQuantile || s === KEYS.timestamp) keyOf.set(i, s);
  });
  const window = store.windows.length;
  const durationNs = Number(p.durationNanos);
  const stamped = Number(p.timeNanos);
  // Without a known start, time_nanos is taken as the start (pprof's definition).
  const startNs = source.startNs ?? stamped;
  store.windows.push({
    file: source.file,
    format: source.live === true ? 'live' : 'pprof',
    profileId: source.profileId,
    startNs,
    endNs: startNs + durationNs,
    hasCpu: slots.includes('cpu'),
  });
  const stackCache = new Map<string, number>();
  let added = 0;
  // A live window's times are kept beside its samples (see SampleTimes).
  const times = sampleTimes(p);
  for (let index = 0; index < p.sample.length; index++) {
    const s = p.sample[index] as ProfileType['sample'][number];
    const lk = s.locationId.join(',');
    let stack = stackCache.get(lk);
    if (stack === undefined) {
      const frames: number[] = [];
      for (let i = s.locationId.length - 1; i >= 0; i--) frames.push(...(locFrames.get(Number(s.locationId[i])) ?? []));
      stack = store.stack(frames);
      stackCache.set(lk, stack);
    }
    let spanId = '';
    let traceId = '';
    let spanName = '';
    let localRoot = '';
    let tailOperation = '';
    let tailQuantile = '';
    const us = sampleTimeUs(times, index);
    let timeNs = Number.isNaN(us) ? 0 : us * 1000;
    for (const l of s.label) {
      const k = keyOf.get(Number(l.key));
      if (k === undefined) continue;
      if (k === KEYS.timestamp) timeNs = Number(l.num);
      else if (k === KEYS.spanId) spanId = str(l.str).toLowerCase();
      else if (k === KEYS.traceId) traceId = str(l.str).toLowerCase();
      else if (k === KEYS.spanName) spanName = str(l.str);
      else if (k === KEYS.localRoot) localRoot = str(l.str).toLowerCase();
      else if (k === KEYS.tailOperation) tailOperation = str(l.str);
      else if (k === KEYS.tailQuantile) tailQuantile = str(l.str);
    }
    let samples = 0;
    let wallNs = 0;
    let cpuNs = 0;
    let offNs = -1;
    for (let t = 0; t < slots.length; t++) {
      const v = Number(s.value[t] ?? 0);
      switch (slots[t]) {
        case 'samples':
          samples += v;
          break;
        case 'wall':
          wallNs += v;
          break;
        case 'cpu':
          cpuNs += v;
          break;
        case 'off':
          offNs = Math.max(0, offNs) + v;
          break;
        default:
          break;
      }
    }
    // Profiles without a count type (off-CPU) still have one observation per sample.
    if (!slots.includes('samples')) samples = 1;
    if (samples === 0 && wallNs === 0 && cpuNs === 0 && offNs <= 0) continue;
    store.rows.push({
      stack,
      samples,
      wallNs,
      cpuNs,
      offNs,
      spanId,
      traceId,
      spanName,
      localRootSpanId: localRoot,
      tailOperation,
      tailQuantile,
      timeNs,
      window,
    });
    added++;
  }
  return added;
}
