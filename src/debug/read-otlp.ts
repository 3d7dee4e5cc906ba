import { FlameError, KEYS, metricSlot } from './model.js';
import type { MetricSlot, Row, SampleStore } from './model.js';
import { ProtoError, ProtoReader } from './proto.js';

/**
 * Add the wall/CPU samples of an OTLP Profiles request
 * (`ExportProfilesServiceRequest`, opentelemetry-proto v1.11.0, as spanfuse
 * writes to `*.otlp.pb`) to `store`. Profiles of other sample types (heap)
 * are skipped. Trace links become `trace_id`/`span_id`; attributes named
 * like spanfuse's labels fill the rest. Returns the number of rows added.
 */
export function addOtlp(store: SampleStore, bytes: Uint8Array, source: { file: string; profileId: string }): number {
  try {
    return read(store, bytes, source);
  } catch (err) {
    if (err instanceof ProtoError) throw new FlameError('input', `${source.file}: not an OTLP profiles request (${err.message})`);
    throw err;
  }
}

interface Dict {
  strings: string[];
  functions: { name: number; file: number; line: number }[];
  locations: number[][];
  stacks: number[][];
  links: { trace: string; span: string }[];
  attributes: { key: number; value: string }[];
}

interface RawProfile {
  type: number;
  unit: number;
  timeNs: number;
  durationNs: number;
  profileId: string;
  samples: ProtoReader[];
}

function read(store: SampleStore, bytes: Uint8Array, source: { file: string; profileId: string }): number {
  const profiles: RawProfile[] = [];
  let dictBytes: ProtoReader | undefined;
  new ProtoReader(bytes).each((f, wire, r) => {
    if (f === 1 && wire === 2) {
      r.sub().each((f2, w2, rp) => {
        if (f2 === 2 && w2 === 2) {
          rp.sub().each((f3, w3, sp) => {
            if (f3 === 2 && w3 === 2) profiles.push(readProfile(sp.sub()));
          });
        }
      });
    } else if (f === 2 && wire === 2) dictBytes = r.sub();
  });
  if (dictBytes === undefined || profiles.length === 0) {
    throw new FlameError('input', `${source.file}: no profiles in this OTLP request (empty or not an OTLP profiles file)`);
  }
  const d = readDictionary(dictBytes);
  const s = (i: number): string => d.strings[i] ?? '';
  const used = profiles.map((p) => ({ p, slot: metricSlot(s(p.type), s(p.unit)) })).filter((x) => x.slot !== undefined && x.slot !== 'off');
  if (used.length === 0) {
    const types = profiles.map((p) => `${s(p.type)}/${s(p.unit)}`).join(', ');
    throw new FlameError('input', `${source.file}: OTLP sample types ${types}; flamegraphs read sample counts, wall or cpu time`);
  }
  const frameIds = d.functions.map((fn) => store.frame(s(fn.name), s(fn.file), fn.line));
  const stackIds = new Map<number, number>();
  const stackOf = (i: number): number => {
    let id = stackIds.get(i);
    if (id === undefined) {
      const frames: number[] = [];
      const locs = d.stacks[i] ?? [];
      // Stacks and lines are leaf first in OTLP; the store wants root first.
      for (let li = locs.length - 1; li >= 0; li--) {
        const fns = d.locations[locs[li] ?? 0] ?? [];
        for (let k = fns.length - 1; k >= 0; k--) frames.push(frameIds[fns[k] ?? 0] ?? store.frame('(unknown)', '', 0));
      }
      id = store.stack(frames);
      stackIds.set(i, id);
    }
    return id;
  };
  const first = used[0]!.p;
  const window = store.windows.length;
  store.windows.push({
    file: source.file,
    format: 'otlp',
    profileId: first.profileId || source.profileId,
    startNs: first.timeNs,
    endNs: first.timeNs + first.durationNs,
    hasCpu: used.some((u) => u.slot === 'cpu'),
  });
  const hasCount = used.some((u) => u.slot === 'samples');
  // One OTLP Profile per sample type: the observations of one pprof sample
  // (same stack, attributes, link and timestamp) meet again in one row, so
  // per-sample figures such as wall minus CPU stay right.
  const rowOf = new Map<string, Row>();
  let added = 0;
  for (const { p, slot } of used) {
    for (const sr of p.samples) {
      let stack = 0;
      let link = 0;
      const attrs: number[] = [];
      const values: number[] = [];
      const times: number[] = [];
      sr.each((f, wire, r) => {
        if (f === 1 && wire === 0) stack = r.varint();
        else if (f === 2) r.repeated(wire, attrs, (x) => x.varint());
        else if (f === 3 && wire === 0) link = r.varint();
        else if (f === 4) r.repeated(wire, values, (x) => x.varint());
        else if (f === 5) r.repeated(wire, times, (x) => x.fixed64());
      });
      const identity = `${stack}|${attrs.join(',')}|${link}|`;
      let base: Omit<Row, 'samples' | 'wallNs' | 'cpuNs' | 'offNs' | 'timeNs'> | undefined;
      for (let i = 0; i < values.length; i++) {
        const v = values[i] ?? 0;
        const ts = times[i] ?? 0;
        const key = identity + String(ts);
        let target = rowOf.get(key);
        if (target === undefined) {
          base ??= rowBase(d, s, stackOf(stack), attrs, link, window);
          target = { ...base, samples: 0, wallNs: 0, cpuNs: 0, offNs: -1, timeNs: ts };
          rowOf.set(key, target);
          store.rows.push(target);
          added++;
        }
        addValue(target, slot, v, hasCount);
      }
    }
  }
  return added;
}

function rowBase(d: Dict, s: (i: number) => string, stack: number, attrs: readonly number[], link: number, window: number): Omit<Row, 'samples' | 'wallNs' | 'cpuNs' | 'offNs' | 'timeNs'> {
  const labels: Record<string, string> = {};
  for (const ai of attrs) {
    const a = d.attributes[ai];
    if (a !== undefined) labels[s(a.key)] = a.value;
  }
  const l = link > 0 ? d.links[link] : undefined;
  return {
    stack,
    spanId: (l?.span ?? labels[KEYS.spanId] ?? '').toLowerCase(),
    traceId: (l?.trace ?? labels[KEYS.traceId] ?? '').toLowerCase(),
    spanName: labels[KEYS.spanName] ?? '',
    localRootSpanId: (labels[KEYS.localRoot] ?? '').toLowerCase(),
    tailOperation: labels[KEYS.tailOperation] ?? '',
    tailQuantile: labels[KEYS.tailQuantile] ?? '',
    window,
  };
}

function addValue(r: Row, slot: MetricSlot, v: number, hasCount: boolean): void {
  // With a count profile each observation is counted there; without one, every wall observation is a sample.
  if (slot === 'samples') r.samples += v;
  else if (slot === 'wall') {
    r.wallNs += v;
    if (!hasCount) r.samples += 1;
  } else if (slot === 'cpu') r.cpuNs += v;
}

function readProfile(r: ProtoReader): RawProfile {
  const p: RawProfile = { type: 0, unit: 0, timeNs: 0, durationNs: 0, profileId: '', samples: [] };
  r.each((f, wire, x) => {
    if (f === 1 && wire === 2) {
      x.sub().each((g, w2, y) => {
        if (g === 1 && w2 === 0) p.type = y.varint();
        else if (g === 2 && w2 === 0) p.unit = y.varint();
      });
    } else if (f === 2 && wire === 2) p.samples.push(x.sub());
    else if (f === 3 && wire === 1) p.timeNs = x.fixed64();
    else if (f === 4 && wire === 0) p.durationNs = x.varint();
    else if (f === 7 && wire === 2) p.profileId = Buffer.from(x.bytes()).toString('hex');
  });
  return p;
}

function readDictionary(r: ProtoReader): Dict {
  const d: Dict = { strings: [], functions: [], locations: [], stacks: [], links: [], attributes: [] };
  r.each((f, wire, x) => {
    if (wire !== 2) return;
    if (f === 5) d.strings.push(x.string());
    else if (f === 3) {
      const fn = { name: 0, file: 0, line: 0 };
      x.sub().each((g, w, y) => {
        if (g === 1 && w === 0) fn.name = y.varint();
        else if (g === 3 && w === 0) fn.file = y.varint();
        else if (g === 4 && w === 0) fn.line = y.varint();
      });
      d.functions.push(fn);
    } else if (f === 2) {
      const fns: number[] = [];
      x.sub().each((g, w, y) => {
        if (g === 3 && w === 2) {
          y.sub().each((h, w3, z) => {
            if (h === 1 && w3 === 0) fns.push(z.varint());
          });
        }
      });
      d.locations.push(fns);
    } else if (f === 7) {
      const locs: number[] = [];
      x.sub().each((g, w, y) => {
        if (g === 1) y.repeated(w, locs, (z) => z.varint());
      });
      d.stacks.push(locs);
    } else if (f === 4) {
      const link = { trace: '', span: '' };
      x.sub().each((g, w, y) => {
        if (g === 1 && w === 2) link.trace = Buffer.from(y.bytes()).toString('hex');
        else if (g === 2 && w === 2) link.span = Buffer.from(y.bytes()).toString('hex');
      });
      d.links.push(link);
    } else if (f === 6) {
      const a = { key: 0, value: '' };
      x.sub().each((g, w, y) => {
        if (g === 1 && w === 0) a.key = y.varint();
        else if (g === 2 && w === 2) a.value = anyValue(y.sub());
      });
      d.attributes.push(a);
    }
  });
  return d;
}

function anyValue(r: ProtoReader): string {
  let out = '';
  r.each((f, wire, x) => {
    if (f === 1 && wire === 2) out = x.string();
    else if (f === 2 && wire === 0) out = x.varint() === 0 ? 'false' : 'true';
    else if (f === 3 && wire === 0) out = String(x.varint());
  });
  return out;
}
