/**
 * Read a V8 CPU profile (`node --cpu-prof`) of the overhead bench's server
 * and say where its main thread's time went, by JS function. With `perf`,
 * code that runs in V8's interpreter or baseline tier (spanfuse's
 * once-per-window code mostly does) shows as bytecode handlers and
 * trampolines unless node runs with `--interpreted-frames-native-stack`;
 * V8's own sampler names every JS frame whatever its tier.
 *
 * Each sample is given to the innermost frame that has an owner: spanfuse
 * (dist/src), @datadog/pprof and pprof-format, the app (dist/bench), the
 * OpenTelemetry SDK, Node's own JS (node:), or V8's pseudo-frames
 * ((garbage collector), (program), (idle)); native frames without a script
 * go to the JS frame that called them.
 *
 *   node dist/bench/overhead/run.js --rounds 1 --warmup 20 --duration 40 --configs spanfuse-default \
 *     --nodes node24 --server-flag=--cpu-prof --server-flag=--cpu-prof-dir=DIR --server-flag=--cpu-prof-interval=500
 *   node dist/bench/perf/cpuprof.js owners FILE [REQ_PER_S] [TOP]     time by owner, then spanfuse's and pprof's functions
 *   node dist/bench/perf/cpuprof.js diff A B REQ_A REQ_B [OWNER]      µs per request by function of OWNER (default node), B − A
 *   node dist/bench/perf/cpuprof.js bursts FILE FUNCTION [URL_PART]   when samples inside FUNCTION came (bursts 50 ms apart)
 *   node dist/bench/perf/cpuprof.js inside FILE FUNCTION [URL_PART]   self time of everything called from FUNCTION
 *   node dist/bench/perf/cpuprof.js range FILE FROM_MS TO_MS          samples in a time range of the profile, by owner and leaf
 *
 * The overhead bench always runs the control first: with `--configs
 * spanfuse-default` DIR gets two profiles, the control's and spanfuse's
 * (their pids are in the bench's JSON, `info.pid`).
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

class Loaded {
  readonly byId = new Map<number, ProfileNode>();
  readonly parent = new Map<number, number>();
  /** Samples whose leaf is each node. */
  readonly self = new Map<number, number>();
  /** ms per sample. */
  readonly msPerSample: number;
  readonly seconds: number;

  constructor(readonly p: CpuProfile) {
    for (const n of p.nodes) {
      this.byId.set(n.id, n);
      for (const c of n.children ?? []) this.parent.set(c, n.id);
    }
    for (const s of p.samples) this.self.set(s, (this.self.get(s) ?? 0) + 1);
    this.seconds = (p.endTime - p.startTime) / 1e6;
    this.msPerSample = (p.endTime - p.startTime) / 1000 / Math.max(1, p.samples.length);
  }

  frame(id: number): CallFrame {
    return (this.byId.get(id) as ProfileNode).callFrame;
  }

  /** The innermost owned frame of a leaf node: [owner, frame]. */
  ownerOf(leaf: number): [string, CallFrame] {
    let cur: number | undefined = leaf;
    while (cur !== undefined) {
      const cf = this.frame(cur);
      const o = owner(cf);
      if (o !== undefined) return [o, cf];
      cur = this.parent.get(cur);
    }
    return ['(native)', this.frame(leaf)];
  }
}

function owner(cf: CallFrame): string | undefined {
  const u = cf.url;
  if (u === '') return cf.functionName.startsWith('(') ? cf.functionName : undefined;
  if (u.includes('/dist/src/')) return 'spanfuse';
  if (u.includes('@datadog/pprof') || u.includes('pprof-format')) return 'pprof';
  if (u.includes('/dist/bench/')) return 'app';
  if (u.includes('@opentelemetry')) return 'otel';
  if (u.startsWith('node:')) return 'node';
  return 'other';
}

function short(cf: CallFrame): string {
  const u = cf.url.replace(/.*\/dist\/src\//, 'spanfuse/').replace(/.*node_modules\//, '');
  return `${cf.functionName || '(anonymous)'} ${u}`;
}

function load(file: string): Loaded {
  return new Loaded(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile);
}

function sorted(m: Map<string, number>, top: number): [string, number][] {
  return [...m].sort((a, b) => b[1] - a[1]).slice(0, top);
}

function owners(file: string, reqPerS: number, top: number): void {
  const l = load(file);
  const byOwner = new Map<string, number>();
  const fns = new Map<string, number>();
  for (const [id, n] of l.self) {
    const [o, cf] = l.ownerOf(id);
    byOwner.set(o, (byOwner.get(o) ?? 0) + n);
    if (o === 'spanfuse' || o === 'pprof') fns.set(`${o} ${short(cf)}`, (fns.get(`${o} ${short(cf)}`) ?? 0) + n);
  }
  const perS = (n: number): number => (n * l.msPerSample) / l.seconds;
  const perReq = (n: number): string => (reqPerS > 0 ? `  ${((perS(n) * 1000) / reqPerS).toFixed(2).padStart(7)} µs/req` : '');
  console.log(`${l.p.samples.length} samples over ${l.seconds.toFixed(1)} s (${(l.msPerSample * 1000).toFixed(0)} µs each)`);
  for (const [o, n] of sorted(byOwner, 20)) console.log(`${perS(n).toFixed(2).padStart(8)} ms/s${perReq(n)}  ${o}`);
  console.log("-- spanfuse's and pprof's own functions");
  for (const [f, n] of sorted(fns, top)) console.log(`${perS(n).toFixed(3).padStart(8)} ms/s${perReq(n)}  ${f}`);
}

function diff(a: string, b: string, reqA: number, reqB: number, only: string): void {
  const per = (l: Loaded, req: number): Map<string, number> => {
    const m = new Map<string, number>();
    for (const [id, n] of l.self) {
      const [o, cf] = l.ownerOf(id);
      if (o !== only) continue;
      m.set(short(cf), (m.get(short(cf)) ?? 0) + (((n * l.msPerSample) / l.seconds) * 1000) / req);
    }
    return m;
  };
  const ma = per(load(a), reqA);
  const mb = per(load(b), reqB);
  const rows = [...new Set([...ma.keys(), ...mb.keys()])].map((k): [string, number, number] => [k, ma.get(k) ?? 0, mb.get(k) ?? 0]);
  rows.sort((x, y) => y[2] - y[1] - (x[2] - x[1]));
  const sum = (i: 1 | 2): number => rows.reduce((s, r) => s + r[i], 0);
  console.log(`${only}: ${sum(1).toFixed(2)} → ${sum(2).toFixed(2)} µs/request`);
  const line = (r: [string, number, number]): void => console.log(`${r[1].toFixed(2).padStart(7)} ${r[2].toFixed(2).padStart(7)} ${(r[2] - r[1]).toFixed(2).padStart(7)}  ${r[0]}`);
  rows.slice(0, 20).forEach(line);
  console.log('...');
  rows.slice(-5).forEach(line);
}

function inFunction(l: Loaded, fn: string, urlPart: string): (leaf: number) => boolean {
  const memo = new Map<number, boolean>();
  return (leaf) => {
    const known = memo.get(leaf);
    if (known !== undefined) return known;
    let cur: number | undefined = leaf;
    let r = false;
    while (cur !== undefined) {
      const cf = l.frame(cur);
      if (cf.functionName === fn && cf.url.includes(urlPart)) {
        r = true;
        break;
      }
      cur = l.parent.get(cur);
    }
    memo.set(leaf, r);
    return r;
  };
}

function bursts(file: string, fn: string, urlPart: string): void {
  const l = load(file);
  const inside = inFunction(l, fn, urlPart);
  const out: { start: number; end: number; n: number }[] = [];
  let t = l.p.startTime;
  for (let i = 0; i < l.p.samples.length; i++) {
    t += l.p.timeDeltas[i] ?? 0;
    if (!inside(l.p.samples[i] as number)) continue;
    const at = (t - l.p.startTime) / 1000;
    const last = out[out.length - 1];
    if (last !== undefined && at - last.end < 50) {
      last.end = at;
      last.n++;
    } else out.push({ start: at, end: at, n: 1 });
  }
  console.log(`${out.reduce((s, b) => s + b.n, 0)} samples in ${fn} (${(l.msPerSample * 1000).toFixed(0)} µs each), ${out.length} bursts:`);
  for (const b of out) console.log(`${b.start.toFixed(0).padStart(8)} ms  ${(b.n * l.msPerSample).toFixed(1).padStart(6)} ms of samples over ${(b.end - b.start).toFixed(1)} ms`);
}

function inside(file: string, fn: string, urlPart: string): void {
  const l = load(file);
  const within = inFunction(l, fn, urlPart);
  const m = new Map<string, number>();
  let total = 0;
  for (const [id, n] of l.self) {
    if (!within(id)) continue;
    total += n;
    const k = short(l.frame(id));
    m.set(k, (m.get(k) ?? 0) + n);
  }
  console.log(`${(total * l.msPerSample).toFixed(1)} ms in ${fn} over ${l.seconds.toFixed(1)} s`);
  for (const [k, n] of sorted(m, 25)) console.log(`${(n * l.msPerSample).toFixed(1).padStart(8)} ms  ${k}`);
}

function range(file: string, fromMs: number, toMs: number): void {
  const l = load(file);
  const m = new Map<string, number>();
  let t = l.p.startTime;
  let total = 0;
  for (let i = 0; i < l.p.samples.length; i++) {
    t += l.p.timeDeltas[i] ?? 0;
    const at = (t - l.p.startTime) / 1000;
    if (at < fromMs || at > toMs) continue;
    const id = l.p.samples[i] as number;
    const [o, cf] = l.ownerOf(id);
    const k = `${o}  ${short(cf)} <- ${short(l.frame(id))}`;
    m.set(k, (m.get(k) ?? 0) + 1);
    total++;
  }
  console.log(`${total} samples between ${fromMs} and ${toMs} ms of the profile (${(l.msPerSample * 1000).toFixed(0)} µs each)`);
  for (const [k, n] of sorted(m, 25)) console.log(`${String(n).padStart(6)}  ${k}`);
}

const [cmd, ...rest] = process.argv.slice(2);
const need = (i: number): string => {
  const v = rest[i];
  if (v === undefined) throw new Error(`missing argument ${i + 1} for ${cmd ?? '(no command)'}; see the header of bench/perf/cpuprof.ts`);
  return v;
};
if (cmd === 'owners') owners(need(0), Number(rest[1] ?? 0), Number(rest[2] ?? 40));
else if (cmd === 'diff') diff(need(0), need(1), Number(need(2)), Number(need(3)), rest[4] ?? 'node');
else if (cmd === 'bursts') bursts(need(0), need(1), rest[2] ?? '');
else if (cmd === 'inside') inside(need(0), need(1), rest[2] ?? '');
else if (cmd === 'range') range(need(0), Number(need(1)), Number(need(2)));
else throw new Error('usage: cpuprof.js owners|diff|bursts|inside|range ... (see the header of bench/perf/cpuprof.ts)');
