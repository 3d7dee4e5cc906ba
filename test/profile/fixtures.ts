// Inputs for the export tests: windows from the real @datadog/pprof sampler
// and small hand-built ones whose content is known exactly.
import { randomBytes } from 'node:crypto';
import { time } from '@datadog/pprof';
import type { LabelSet } from '@datadog/pprof';
import { Function as PFunction, Label, Location, Line, Profile, Sample, StringTable, ValueType } from '../../src/core/pprof.js';
import type { WindowProfile } from '../../src/core/window.js';

export interface SpanLabels {
  trace_id: string;
  span_id: string;
  trace_flags: string;
  span_name: string;
  local_root_span_id: string;
}

export function hex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

export function newSpan(name: string): SpanLabels {
  const span_id = hex(8);
  return { trace_id: hex(16), span_id, trace_flags: '01', span_name: name, local_root_span_id: span_id };
}

const THREAD = { 'thread.id': String(process.pid), 'thread.name': 'main' };

function burn(ms: number): number {
  const end = Date.now() + ms;
  let x = 0;
  while (Date.now() < end) x += Math.sqrt(x + 1);
  return x;
}

/**
 * Run the real time profiler over a few spans and samples outside any span.
 * Labels are what the spine produces: span labels, thread labels and
 * `end_timestamp_ns`.
 */
export function sampledWindow(spans: SpanLabels[], msPerSpan = 40): WindowProfile {
  const startNs = BigInt(Date.now()) * 1_000_000n;
  time.start({ intervalMicros: 1000, withContexts: true, collectCpuTime: true, useCPED: false });
  for (const s of spans) {
    time.setContext({ ...s, ...THREAD });
    burn(msPerSpan);
  }
  time.setContext({ ...THREAD });
  burn(msPerSpan);
  // The sampler's timestamps are Unix microseconds; the label is bigint
  // nanoseconds (the serializer takes bigint, its type says number).
  const wall = time.stop(false, ({ context }) => {
    const labels: Record<string, string | bigint> = { ...((context?.context as Record<string, string> | undefined) ?? {}) };
    if (context?.timestamp !== undefined) labels['end_timestamp_ns'] = context.timestamp * 1000n;
    return labels as unknown as LabelSet;
  });
  const endNs = BigInt(Date.now()) * 1_000_000n;
  return makeWindow(wall, startNs, endNs);
}

export function makeWindow(wall: Profile, startUnixNs: bigint, endUnixNs: bigint, extra: Partial<WindowProfile> = {}): WindowProfile {
  return {
    profileId: hex(16),
    seq: 0,
    startUnixNs,
    endUnixNs,
    samplingIntervalMicros: 1000,
    mode: 'async-hooks',
    wall,
    attributes: { 'spanfuse.context.mode': 'async-hooks' },
    tailSpans: [],
    ...extra,
  };
}

export interface HandFrame {
  name: string;
  file: string;
  line: number;
}
export interface HandSample {
  stack: HandFrame[]; // leaf first
  values: number[];
  labels: Record<string, string | bigint>;
}

/** A pprof-format Profile built by hand with the given sample types. */
export function handProfile(types: [string, string][], samples: HandSample[], periodNs = 1_000_000): Profile {
  const st = new StringTable();
  const fnIds = new Map<string, number>();
  const locIds = new Map<string, number>();
  const functions: PFunction[] = [];
  const locations: Location[] = [];
  const locationOf = (f: HandFrame): number => {
    const key = `${f.name}\0${f.file}\0${f.line}`;
    let loc = locIds.get(key);
    if (loc !== undefined) return loc;
    const fkey = `${f.name}\0${f.file}`;
    let fid = fnIds.get(fkey);
    if (fid === undefined) {
      fid = functions.length + 1;
      fnIds.set(fkey, fid);
      functions.push(new PFunction({ id: fid, name: st.dedup(f.name), systemName: st.dedup(f.name), filename: st.dedup(f.file) }));
    }
    loc = locations.length + 1;
    locIds.set(key, loc);
    locations.push(new Location({ id: loc, line: [new Line({ functionId: fid, line: f.line })] }));
    return loc;
  };
  const sample = samples.map(
    (s) =>
      new Sample({
        locationId: s.stack.map(locationOf),
        value: s.values,
        label: Object.entries(s.labels).map(([k, v]) =>
          typeof v === 'bigint' ? new Label({ key: st.dedup(k), num: v }) : new Label({ key: st.dedup(k), str: st.dedup(v) }),
        ),
      }),
  );
  const sampleType = types.map(([t, u]) => new ValueType({ type: st.dedup(t), unit: st.dedup(u) }));
  const periodType = sampleType[sampleType.length - 1] ?? new ValueType({});
  return new Profile({
    sampleType,
    sample,
    location: locations,
    function: functions,
    stringTable: st,
    timeNanos: 0,
    durationNanos: 0,
    periodType,
    period: periodNs,
  });
}

/** A small wall profile with two spans and one sample outside any span. */
export function handWindow(startUnixNs = 1_790_000_000_000_000_000n): WindowProfile {
  const a = newSpan('GET /users/:id');
  const b = newSpan('db.query');
  const thread = { 'thread.id': '4242', 'thread.name': 'main' };
  const main: HandFrame = { name: 'main', file: '/srv/app/index.js', line: 1 };
  const handler: HandFrame = { name: 'handler', file: '/srv/app/routes.js', line: 10 };
  const query: HandFrame = { name: 'query', file: '/srv/app/db.js', line: 20 };
  const t = (ms: number): bigint => startUnixNs + BigInt(ms) * 1_000_000n;
  const types: [string, string][] = [
    ['sample', 'count'],
    ['wall', 'nanoseconds'],
    ['cpu', 'nanoseconds'],
  ];
  const wall = handProfile(types, [
    { stack: [handler, main], values: [1, 1_000_000, 900_000], labels: { ...a, ...thread, end_timestamp_ns: t(1) } },
    { stack: [handler, main], values: [1, 1_000_000, 800_000], labels: { ...a, ...thread, end_timestamp_ns: t(2) } },
    { stack: [query, handler, main], values: [1, 2_000_000, 100_000], labels: { ...b, ...thread, end_timestamp_ns: t(4) } },
    { stack: [main], values: [1, 1_000_000, 0], labels: { ...thread, end_timestamp_ns: t(5) } },
  ]);
  return makeWindow(wall, startUnixNs, startUnixNs + 10_000_000n);
}
