import { fileURLToPath } from 'node:url';
import { context, trace } from '@opentelemetry/api';
import { localRootOf, spanNameOf } from '../context/index.js';
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
import { Function as PprofFunction, Label, Line, Location, Sample, sampleTimeNs, sampleTimes } from '../core/pprof.js';
import type { WindowProfile } from '../core/window.js';
import { nowUnixNs } from '../sampler/index.js';
import { fs } from '../core/builtins.js';

const { readFileSync } = fs;

/** spanfuse's own source folder (dist/src): its frames are not the app's stack. */
const OWN_DIR = fileURLToPath(new URL('../', import.meta.url));
const MAX_FRAMES = 64;

interface Frame {
  readonly name: string;
  readonly file: string;
  readonly line: number;
}

/** One flush request's view of the thread: its stack and active span then. */
export interface FlushMoment {
  readonly frames: readonly Frame[];
  readonly traceId?: string;
  readonly spanId?: string;
  readonly traceFlags?: number;
  readonly spanName?: string;
  /** The span's local root (as on every other sample of the span). */
  readonly localRootSpanId?: string;
  readonly unixNs: bigint;
}

/** CPU time the calling thread has used, ns (Linux schedstat); undefined elsewhere. */
export function threadCpuNs(): number | undefined {
  try {
    const v = Number(readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ')[0]);
    return Number.isFinite(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What the thread was doing when the flush request interrupted it: the JS
 * stack below the request (spanfuse's frames and the inspector's evaluation
 * removed) and the active span.
 */
export function captureFlushMoment(): FlushMoment {
  const frames: Frame[] = [];
  // Saved to be put back as it was (a property, not called here).
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const prepare = Error.prepareStackTrace;
  const limit = Error.stackTraceLimit;
  try {
    Error.stackTraceLimit = MAX_FRAMES;
    Error.prepareStackTrace = (_e, sites: NodeJS.CallSite[]) => sites;
    const sites = (new Error().stack as unknown as NodeJS.CallSite[] | undefined) ?? [];
    let below = false;
    for (const s of sites) {
      const file = s.getFileName() ?? '';
      const own = file === '' || file.startsWith(OWN_DIR) || file.startsWith(`file://${OWN_DIR}`);
      if (!below && own) continue;
      below = true;
      frames.push({ name: s.getFunctionName() ?? '(anonymous)', file, line: s.getLineNumber() ?? 0 });
    }
  } catch {
    // no stack: the sample goes without frames
  } finally {
    Error.prepareStackTrace = prepare;
    Error.stackTraceLimit = limit;
  }
  const span = trace.getSpan(context.active());
  const sc = span?.spanContext();
  const unixNs = nowUnixNs();
  if (span === undefined || sc === undefined || !trace.isSpanContextValid(sc)) return { frames, unixNs };
  const name = spanNameOf(span);
  return {
    frames,
    traceId: sc.traceId,
    spanId: sc.spanId,
    traceFlags: sc.traceFlags,
    ...(name !== undefined ? { spanName: name } : {}),
    localRootSpanId: localRootOf(span),
    unixNs,
  };
}

/**
 * Close the gap between the window's last sample and a flush: the CPU the
 * thread used since the window opened that no sample accounts for, at most
 * the time since the last sample, goes to one more sample, taken now, on
 * the interrupted stack, with its span. A
 * profiler's sample is exactly that (the stack at a moment, with the time
 * since the previous one); this one is taken by the flush instead of the
 * sampler's timer, which on a busy machine may not have fired for tens of ms.
 * Returns the ns added (0 when nothing was missing or unknown).
 */
export function addFlushSample(w: WindowProfile, moment: FlushMoment, cpuAtOpenNs: number | undefined): number {
  const cpuNow = threadCpuNs();
  if (cpuNow === undefined || cpuAtOpenNs === undefined || moment.frames.length === 0) return 0;
  const p = w.wall;
  const st = p.stringTable;
  const types = p.sampleType.map((t) => st.strings[Number(t.type)] ?? '');
  const iCpu = types.indexOf('cpu');
  if (iCpu < 0) return 0;
  const tsKey = st.strings.indexOf(LABEL_TIMESTAMP_NS);
  let accounted = 0;
  let lastNs = w.startUnixNs;
  const times = sampleTimes(p);
  p.sample.forEach((s, i) => {
    accounted += Number(s.value[iCpu] ?? 0);
    const ns = sampleTimeNs(times, i, s.label, tsKey);
    if (ns !== undefined && ns > lastNs) lastNs = ns;
  });
  // Only what ran after the last sample belongs to this stack: CPU that no
  // sample accounts for from before (e.g. start-up) is left out.
  const sinceLast = Number(moment.unixNs - lastNs);
  const missing = Math.round(Math.min(cpuNow - cpuAtOpenNs - accounted, sinceLast));
  if (missing <= 0) return 0;
  let nextFn = p.function.reduce((m, f) => Math.max(m, Number(f.id)), 0) + 1;
  let nextLoc = p.location.reduce((m, l) => Math.max(m, Number(l.id)), 0) + 1;
  const fnIds = new Map<string, number>();
  for (const f of p.function) fnIds.set(`${st.strings[Number(f.name)] ?? ''}\0${st.strings[Number(f.filename)] ?? ''}`, Number(f.id));
  const locationId: number[] = [];
  for (const fr of moment.frames) {
    const key = `${fr.name}\0${fr.file}`;
    let fid = fnIds.get(key);
    if (fid === undefined) {
      fid = nextFn++;
      fnIds.set(key, fid);
      p.function.push(new PprofFunction({ id: fid, name: st.dedup(fr.name), systemName: st.dedup(fr.name), filename: st.dedup(fr.file) }));
    }
    const lid = nextLoc++;
    p.location.push(new Location({ id: lid, line: [new Line({ functionId: fid, line: fr.line })] }));
    locationId.push(lid);
  }
  const str = (key: string, value: string): Label => new Label({ key: st.dedup(key), str: st.dedup(value) });
  const label: Label[] = [];
  const tid = w.attributes['thread.id'];
  const tname = w.attributes['thread.name'];
  if (tid !== undefined) label.push(str(LABEL_THREAD_ID, String(tid)));
  if (tname !== undefined) label.push(str(LABEL_THREAD_NAME, String(tname)));
  if (moment.traceId !== undefined && moment.spanId !== undefined) {
    label.push(str(LABEL_TRACE_ID, moment.traceId), str(LABEL_SPAN_ID, moment.spanId));
    label.push(str(LABEL_TRACE_FLAGS, (moment.traceFlags ?? 0).toString(16).padStart(2, '0')));
    if (moment.spanName !== undefined) label.push(str(LABEL_SPAN_NAME, moment.spanName));
    if (moment.localRootSpanId !== undefined) label.push(str(LABEL_LOCAL_ROOT_SPAN_ID, moment.localRootSpanId));
  }
  label.push(new Label({ key: st.dedup(LABEL_TIMESTAMP_NS), num: moment.unixNs }));
  const value = types.map((t) => (t === 'sample' ? 1 : t === 'cpu' || t === 'wall' ? missing : 0));
  p.sample.push(new Sample({ locationId, value, label }));
  p.comment.push(st.dedup(`profiler.flush.tail_cpu_ns=${missing}`));
  return missing;
}
