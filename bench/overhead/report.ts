/**
 * Aggregation and rendering: ratios to the control of the same round and
 * runtime (paired, so noise that hit the whole round cancels), summarised as
 * median (min-max) over rounds; a markdown table and the raw JSON.
 */
import { MEMORY_PARTS } from './protocol.js';
import type { MemoryPart, MemorySample } from './protocol.js';
import type { RunResult } from './run-one.js';
import { linearRegression, spread } from './stats.js';
import type { Slope, Spread } from './stats.js';

export const METRICS = ['throughputRps', 'cpuPerRequestMicros', 'p50Ms', 'p99Ms', 'rssMb', 'heapUsedMb', 'serverCpuShare'] as const;
export type Metric = (typeof METRICS)[number];

export function metric(r: RunResult, m: Metric): number {
  switch (m) {
    case 'p50Ms':
      return r.load?.latencyMs.p50 ?? Number.NaN;
    case 'p99Ms':
      return r.load?.latencyMs.p99 ?? Number.NaN;
    case 'serverCpuShare':
      // CPU time the server got per second of wall time: ~1.0 when it had its
      // core to itself under saturating load; lower means something else ran
      // on that core (the throughput of that run is then not comparable).
      return r.server === undefined || r.server.wallMs <= 0
        ? Number.NaN
        : (r.server.cpuUserMicros + r.server.cpuSystemMicros) / 1000 / r.server.wallMs;
    default:
      return r[m] ?? Number.NaN;
  }
}

export interface Row {
  readonly config: string;
  readonly runtime: string;
  readonly runs: number;
  readonly failed: number;
  /** The configuration the ratios and deltas are to (`control` unless the configuration names another). */
  readonly reference: string;
  readonly errors: readonly string[];
  readonly absolute: Record<Metric, Spread | null>;
  readonly ratio: Record<Metric, Spread | null>;
  /** Paired differences to the control, in the metric's unit (MB for memory). */
  readonly delta: Record<Metric, Spread | null>;
  readonly attribution: Spread | null;
  readonly exportsInWindow: Spread | null;
  /** Paired differences to the reference by part of the RSS, MB (end of the measured window). */
  readonly memoryParts: Record<MemoryPart, Spread | null>;
  /** spanfuse's own periodic work per request (µs), where the profiler reports it. */
  readonly selfWork: Spread | null;
  /** Its sliced part by stage (µs per request), where reported. */
  readonly selfStages: Readonly<Record<string, Spread | null>> | null;
  /** CPU outside and inside the fixed work, where the runtime lets the server measure it. */
  readonly fixedWork: FixedWorkRow | null;
}

/**
 * The CPU per request split at the service's fixed work (the kernel calls,
 * timed with the main thread's CPU clock): how fast each process ran the same
 * fixed work, and what it spent outside it. Outside is where a profiler's
 * per-request and periodic work lands; the fixed work's speed differs between
 * processes by a few percent whatever runs in them.
 */
export interface FixedWorkRow {
  /** Absolute: µs per request inside / outside the fixed work. */
  readonly inside: Spread | null;
  readonly outside: Spread | null;
  /** Paired with the reference: inside ratio, outside difference (µs). */
  readonly insideRatio: Spread | null;
  readonly outsideDelta: Spread | null;
  /** Reference's CPU per request plus the outside difference, over the reference's: the ratio at equal fixed-work speed. */
  readonly atEqualSpeed: Spread | null;
}

export function aggregate(
  results: readonly RunResult[],
  configs: readonly string[],
  runtimes: readonly string[],
  referenceOf: (config: string) => string = () => 'control',
): Row[] {
  const rows: Row[] = [];
  for (const rt of runtimes) {
    for (const cfg of configs) {
      const reference = referenceOf(cfg);
      const control = new Map<number, RunResult>();
      for (const r of results) if (r.runtime === rt && r.config === reference && r.ok) control.set(r.round, r);
      const mine = results.filter((r) => r.runtime === rt && r.config === cfg);
      const ok = mine.filter((r) => r.ok);
      const absolute = {} as Record<Metric, Spread | null>;
      const ratio = {} as Record<Metric, Spread | null>;
      const delta = {} as Record<Metric, Spread | null>;
      for (const m of METRICS) {
        absolute[m] = spread(ok.map((r) => metric(r, m)));
        const pairs = paired(ok, control, (r) => metric(r, m));
        ratio[m] = spread(pairs.map(([mine, theirs]) => mine / theirs));
        delta[m] = spread(pairs.map(([mine, theirs]) => mine - theirs));
      }
      const memoryParts = {} as Record<MemoryPart, Spread | null>;
      for (const part of MEMORY_PARTS) {
        const pairs = paired(ok, control, (r) => r.server?.memoryParts?.[part] ?? Number.NaN);
        memoryParts[part] = spread(pairs.map(([mine, theirs]) => (mine - theirs) / 2 ** 20));
      }
      rows.push({
        config: cfg,
        runtime: rt,
        runs: mine.length,
        failed: mine.length - ok.length,
        reference,
        errors: [...new Set(mine.filter((r) => !r.ok).map((r) => r.error ?? 'unknown error'))],
        absolute,
        ratio,
        delta,
        // A run whose ground-truth ring overflowed cannot judge old samples.
        attribution: spread(ok.map((r) => (r.attribution?.groundTruthComplete === true ? (r.attribution.share ?? Number.NaN) : Number.NaN))),
        exportsInWindow: spread(ok.map((r) => r.exportsInWindow ?? Number.NaN)),
        memoryParts,
        selfWork: spread(ok.map((r) => r.selfWorkPerRequestMicros ?? Number.NaN)),
        selfStages: stageSpreads(ok),
        fixedWork: fixedWorkRow(ok, control),
      });
    }
  }
  return rows;
}

function fixedWorkRow(ok: readonly RunResult[], control: ReadonlyMap<number, RunResult>): FixedWorkRow | null {
  const inside = spread(ok.map((r) => r.fixedCpuPerRequestMicros ?? Number.NaN));
  if (inside === null) return null;
  const pairs = paired(ok, control, (r) => r);
  const outside = (r: RunResult): number => r.outsideCpuPerRequestMicros ?? Number.NaN;
  const outsideDelta = (mine: RunResult, ref: RunResult): number => outside(mine) - outside(ref);
  return {
    inside,
    outside: spread(ok.map(outside)),
    insideRatio: spread(pairs.map(([mine, ref]) => (mine.fixedCpuPerRequestMicros ?? Number.NaN) / (ref.fixedCpuPerRequestMicros ?? Number.NaN))),
    outsideDelta: spread(pairs.map(([mine, ref]) => outsideDelta(mine, ref))),
    atEqualSpeed: spread(
      pairs.map(([mine, ref]) => {
        const cpuRef = ref.cpuPerRequestMicros ?? Number.NaN;
        return (cpuRef + outsideDelta(mine, ref)) / cpuRef;
      }),
    ),
  };
}

/** `value` of each run and of the reference run of its round (runs whose round has none are left out). */
function paired<T>(runs: readonly RunResult[], reference: ReadonlyMap<number, RunResult>, value: (r: RunResult) => T): [T, T][] {
  const out: [T, T][] = [];
  for (const r of runs) {
    const c = reference.get(r.round);
    if (c !== undefined) out.push([value(r), value(c)]);
  }
  return out;
}

/** A report section: its title, what it shows, and its table's header. */
function section(out: string[], title: string, intro: string, columns: readonly string[]): void {
  out.push('', `### ${title}`, '', intro, '');
  out.push(`| ${columns.join(' | ')} |`, `| ${columns.map(() => '---').join(' | ')} |`);
}

function fmt(n: number, digits: number): string {
  return Number.isFinite(n) ? n.toFixed(digits) : 'n/a';
}

function ratioCell(s: Spread | null): string {
  if (s === null) return 'n/a';
  return `×${fmt(s.median, 3)} (${fmt(s.min, 3)}–${fmt(s.max, 3)})`;
}

function absCell(s: Spread | null, digits: number, unit: string): string {
  if (s === null) return 'n/a';
  const u = unit === '' ? '' : ` ${unit}`;
  return `${fmt(s.median, digits)}${u} (${fmt(s.min, digits)}–${fmt(s.max, digits)})`;
}

function memCell(ratio: Spread | null, delta: Spread | null): string {
  if (ratio === null || delta === null) return 'n/a';
  const sign = delta.median >= 0 ? '+' : '';
  return `${ratioCell(ratio)}, ${sign}${fmt(delta.median, 1)} MB`;
}

function partTitle(p: MemoryPart): string {
  return p.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`);
}

function deltaCell(s: Spread | null): string {
  if (s === null) return 'n/a';
  const signed = (n: number): string => `${n >= 0 ? '+' : ''}${fmt(n, 1)}`;
  return `${signed(s.median)} (${signed(s.min)}–${signed(s.max)})`;
}

function pctCell(s: Spread | null): string {
  if (s === null) return '–';
  return `${fmt(100 * s.median, 1)}% (${fmt(100 * s.min, 1)}–${fmt(100 * s.max, 1)})`;
}

export interface Header {
  readonly title: string;
  readonly date: string;
  readonly machine: string;
  readonly runtimes: Record<string, string>;
  readonly command: string;
  readonly settings: string;
  readonly note: string;
}

export function markdown(h: Header, rows: readonly Row[]): string {
  const out: string[] = [];
  out.push(`## ${h.title}`, '');
  out.push(`- date: ${h.date}`);
  out.push(`- machine: ${h.machine}`);
  out.push(`- runtimes: ${Object.entries(h.runtimes).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  out.push(`- settings: ${h.settings}`);
  out.push(`- command: \`${h.command}\``);
  if (h.note !== '') out.push(`- note: ${h.note}`);
  out.push('');
  out.push('Ratios are to the control of the same round and runtime (to the configuration named after "vs" where a row says so): median (min–max) over rounds.');
  out.push('Control row: absolute values. CPU/request is the server process\'s user+system CPU over the measured window divided by the requests it completed in it.');
  out.push('Attribution: share of samples inside a request\'s own uniquely named function that carry that request\'s span id.');
  out.push('RSS and heap: ratio, then the median paired difference in MB. Server CPU share: CPU seconds the server got per wall second (≈1.00 when it had its core to itself); a run well below 1.00 lost its core to something else and its throughput and latency are not comparable, while CPU per request still is.');
  for (const rt of Object.keys(h.runtimes)) {
    out.push('', `### ${rt} (${h.runtimes[rt] ?? ''})`, '');
    out.push('| configuration | throughput | CPU / request | p50 latency | p99 latency | RSS | heap used | attribution | exports in window | server CPU share | runs (failed) |');
    out.push('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
    for (const r of rows.filter((x) => x.runtime === rt)) {
      const a = r.absolute;
      if (r.config === 'control') {
        out.push(
          `| control (absolute) | ${absCell(a.throughputRps, 0, 'req/s')} | ${absCell(a.cpuPerRequestMicros, 0, 'µs')} | ${absCell(a.p50Ms, 2, 'ms')} | ${absCell(a.p99Ms, 2, 'ms')} | ${absCell(a.rssMb, 1, 'MB')} | ${absCell(a.heapUsedMb, 1, 'MB')} | – | – | ${absCell(a.serverCpuShare, 2, '')} | ${r.runs} (${r.failed}) |`,
        );
        continue;
      }
      const q = r.ratio;
      out.push(
        `| ${r.reference === 'control' ? r.config : `${r.config} (vs ${r.reference})`} | ${ratioCell(q.throughputRps)} | ${ratioCell(q.cpuPerRequestMicros)} | ${ratioCell(q.p50Ms)} | ${ratioCell(q.p99Ms)} | ${memCell(q.rssMb, r.delta.rssMb)} | ${memCell(q.heapUsedMb, r.delta.heapUsedMb)} | ${pctCell(r.attribution)} | ${r.exportsInWindow === null ? '–' : fmt(r.exportsInWindow.median, 0)} | ${absCell(a.serverCpuShare, 2, '')} | ${r.runs} (${r.failed}) |`,
      );
    }
  }
  const withParts = rows.filter((r) => r.config !== r.reference && MEMORY_PARTS.some((p) => r.memoryParts[p] !== null));
  if (withParts.length > 0) {
    out.push('', '### Where the RSS difference is', '');
    out.push(
      'Median (min–max) paired difference to the reference in MB, at the end of the measured window. V8 spaces by resident size (new space: both semi-spaces); external: what V8 counts as held outside its heap (buffers); outside heap: the rest of RSS (native code and allocations, stacks).',
      '',
    );
    out.push(`| runtime | configuration | ${MEMORY_PARTS.map(partTitle).join(' | ')} |`);
    out.push(`| --- | --- | ${MEMORY_PARTS.map(() => '---').join(' | ')} |`);
    for (const r of withParts) out.push(`| ${r.runtime} | ${r.config} | ${MEMORY_PARTS.map((p) => deltaCell(r.memoryParts[p])).join(' | ')} |`);
  }
  const withSelf = rows.filter((r) => r.selfWork !== null);
  if (withSelf.length > 0) {
    section(
      out,
      "spanfuse's own periodic work",
      "Time the main thread spent in spanfuse's own periodic work (window builds, scrubbing, encoding, native profiler stops, thread-state passes; `stats().selfTime`) inside the measured window, per request completed: median (min–max) over rounds. V8's sampler and the per-span work are not in it.",
      ['runtime', 'configuration', 'µs / request'],
    );
    for (const r of withSelf) out.push(`| ${r.runtime} | ${r.config} | ${absCell(r.selfWork, 2, 'µs')} |`);
  }
  const withStages = rows.filter((r) => r.selfStages !== null);
  if (withStages.length > 0) {
    const stages = [...new Set(withStages.flatMap((r) => Object.keys(r.selfStages ?? {})))].sort();
    section(
      out,
      "spanfuse's own periodic work by stage",
      'The window work above (its sliced part) by stage, from `stats().selfTime.stagesMs`, µs per request: median (min–max) over rounds. Stops, thread-state passes and what no stage claims (file writes, queueing) are not in these columns.',
      ['runtime', 'configuration', ...stages],
    );
    for (const r of withStages) out.push(`| ${r.runtime} | ${r.config} | ${stages.map((k) => absCell(r.selfStages?.[k] ?? null, 2, '')).join(' | ')} |`);
  }
  const withFixed = rows.filter((r) => r.fixedWork !== null);
  if (withFixed.length > 0) {
    section(
      out,
      'CPU outside the fixed work',
      "With `BENCH_FIXED_CPU=1`: the service's fixed work (its kernel calls) timed with the main thread's CPU clock (every 8th call, `clock_gettime(CLOCK_THREAD_CPUTIME_ID)` through koffi, which then loads in every configuration: RSS is not comparable to runs without it). Its speed differs between processes by a few percent whatever runs in them; what a profiler adds per request lands mostly outside it. Inside and outside: µs per request. Ratio inside: this process's fixed-work CPU over the reference's in the same round (above 1: it ran the same work slower; a profiler's signal handler interrupting the kernel counts here). Outside +: paired difference in µs per request. At equal speed: the reference's CPU per request plus that difference, over the reference's. Median (min–max) over rounds.",
      ['runtime', 'configuration', 'inside', 'outside', 'ratio inside', 'outside +', 'at equal speed'],
    );
    for (const r of withFixed) {
      const f = r.fixedWork as FixedWorkRow;
      const isRef = r.config === r.reference;
      out.push(
        `| ${r.runtime} | ${r.config} | ${absCell(f.inside, 1, 'µs')} | ${absCell(f.outside, 1, 'µs')} | ${isRef ? '–' : ratioCell(f.insideRatio)} | ${isRef ? '–' : absCell(f.outsideDelta, 1, 'µs')} | ${isRef ? '–' : ratioCell(f.atEqualSpeed)} |`,
      );
    }
  }
  const failures = rows.filter((r) => r.errors.length > 0);
  if (failures.length > 0) {
    out.push('', '### Failed runs', '');
    for (const r of failures) for (const e of r.errors) out.push(`- ${r.runtime} ${r.config}: ${e.split('\n')[0] ?? ''}`);
  }
  return out.join('\n') + '\n';
}

export interface SoakRow {
  readonly config: string;
  readonly runtime: string;
  readonly minutes: number;
  readonly samples: number;
  readonly rssMbPerMin: Slope | null;
  readonly heapMbPerMin: Slope | null;
  /** The same slopes over the second half of the run only: a ramp that levels off shows here as flat. */
  readonly lateRssMbPerMin: Slope | null;
  readonly lateHeapMbPerMin: Slope | null;
  readonly rssStartMb: number;
  readonly rssEndMb: number;
  readonly heapStartMb: number;
  readonly heapEndMb: number;
  /**
   * Second-half slopes of RSS's parts (MB/min): V8's committed heap, what
   * lies outside it (RSS − heap committed), RSS's anonymous and file-backed
   * pages, `external`, and with BENCH_MALLINFO=1 malloc's bytes in use and
   * held. Null where not sampled.
   */
  readonly lateParts: Readonly<Record<SoakPart, Slope | null>>;
  /**
   * Every memory sample, for reading the curve: minutes since the mark, then
   * MB of RSS, heap used, heap committed, external, malloc in use, malloc
   * held, RSS anonymous, RSS file-backed (NaN where not sampled).
   */
  readonly series: readonly (readonly number[])[];
  readonly error?: string;
}

export const SOAK_PARTS = ['heap committed', 'outside V8 heap', 'anonymous', 'file-backed', 'external', 'malloc in use', 'malloc held'] as const;
export type SoakPart = (typeof SOAK_PARTS)[number];

const MB = 2 ** 20;
const soakPart: Record<SoakPart, (m: MemorySample) => number | undefined> = {
  'heap committed': (m) => m.heapTotal,
  'outside V8 heap': (m) => m.rss - m.heapTotal,
  anonymous: (m) => m.rssAnon,
  'file-backed': (m) => m.rssFile,
  external: (m) => m.external,
  'malloc in use': (m) => m.mallocInUse,
  'malloc held': (m) => m.mallocArena,
};

function partSlope(min: readonly number[], late: readonly MemorySample[], part: SoakPart): Slope | null {
  const values = late.map(soakPart[part]);
  if (values.some((v) => v === undefined)) return null;
  return linearRegression(min, values.map((v) => (v ?? 0) / MB));
}

/** Memory slope over the soak, after dropping the first min(60 s, 10%) of samples. */
export function soakRow(r: RunResult): SoakRow {
  const mem = r.server?.memory ?? [];
  const skipMs = Math.min(60_000, 0.1 * (r.server?.wallMs ?? 0));
  const kept = mem.filter((m) => m.tMs >= skipMs);
  const min = kept.map((m) => m.tMs / 60_000);
  const first = kept[0];
  const last = kept[kept.length - 1];
  const halfMs = (r.server?.wallMs ?? 0) / 2;
  const late = mem.filter((m) => m.tMs >= halfMs);
  const lateMin = late.map((m) => m.tMs / 60_000);
  return {
    config: r.config,
    runtime: r.runtime,
    minutes: (r.server?.wallMs ?? 0) / 60_000,
    samples: kept.length,
    rssMbPerMin: linearRegression(min, kept.map((m) => m.rss / 2 ** 20)),
    heapMbPerMin: linearRegression(min, kept.map((m) => m.heapUsed / 2 ** 20)),
    lateRssMbPerMin: linearRegression(lateMin, late.map((m) => m.rss / 2 ** 20)),
    lateHeapMbPerMin: linearRegression(lateMin, late.map((m) => m.heapUsed / 2 ** 20)),
    rssStartMb: (first?.rss ?? Number.NaN) / 2 ** 20,
    rssEndMb: (last?.rss ?? Number.NaN) / 2 ** 20,
    heapStartMb: (first?.heapUsed ?? Number.NaN) / 2 ** 20,
    heapEndMb: (last?.heapUsed ?? Number.NaN) / 2 ** 20,
    lateParts: Object.fromEntries(SOAK_PARTS.map((p) => [p, partSlope(lateMin, late, p)])) as Record<SoakPart, Slope | null>,
    series: mem.map((m) => [m.tMs / 60_000, m.rss / MB, m.heapUsed / MB, m.heapTotal / MB, m.external / MB, (m.mallocInUse ?? Number.NaN) / MB, (m.mallocArena ?? Number.NaN) / MB, (m.rssAnon ?? Number.NaN) / MB, (m.rssFile ?? Number.NaN) / MB].map((v) => Math.round(v * 1000) / 1000)),
    ...(r.ok ? {} : { error: r.error ?? 'unknown error' }),
  };
}

function slopeCell(s: Slope | null): string {
  if (s === null) return 'n/a';
  const flat = Math.abs(s.slope) <= 2 * s.stderr ? 'flat within noise' : s.slope > 0 ? 'rising' : 'falling';
  return `${fmt(s.slope, 4)} ± ${fmt(2 * s.stderr, 4)} MB/min (${flat})`;
}

export function soakMarkdown(h: Header, rows: readonly SoakRow[]): string {
  const out: string[] = [];
  out.push(`## ${h.title}`, '');
  out.push(`- date: ${h.date}`, `- machine: ${h.machine}`);
  out.push(`- runtimes: ${Object.entries(h.runtimes).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  out.push(`- settings: ${h.settings}`, `- command: \`${h.command}\``);
  if (h.note !== '') out.push(`- note: ${h.note}`);
  out.push('', 'Slope: least squares over memory samples taken after a forced GC, ± 2 standard errors; "flat within noise" when |slope| ≤ 2 SE.', '');
  out.push('| configuration | runtime | minutes | samples | RSS slope | heap slope | RSS slope, 2nd half | heap slope, 2nd half | RSS start → end | heap start → end |');
  out.push('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const r of rows) {
    if (r.error !== undefined) {
      out.push(`| ${r.config} | ${r.runtime} | failed: ${r.error.split('\n')[0] ?? ''} | | | | | | | |`);
      continue;
    }
    out.push(
      `| ${r.config} | ${r.runtime} | ${fmt(r.minutes, 1)} | ${r.samples} | ${slopeCell(r.rssMbPerMin)} | ${slopeCell(r.heapMbPerMin)} | ${slopeCell(r.lateRssMbPerMin)} | ${slopeCell(r.lateHeapMbPerMin)} | ${fmt(r.rssStartMb, 1)} → ${fmt(r.rssEndMb, 1)} MB | ${fmt(r.heapStartMb, 1)} → ${fmt(r.heapEndMb, 1)} MB |`,
    );
  }
  const parts = rows.filter((r) => r.error === undefined);
  if (parts.length > 0) {
    out.push('', "Second half, RSS by part (heap committed: V8's `heapTotal`; outside V8 heap: RSS − heapTotal; anonymous and file-backed: RSS's pages of each kind, /proc/self/status; malloc: glibc `mallinfo2()`, with BENCH_MALLINFO=1):", '');
    out.push(`| configuration | runtime | ${SOAK_PARTS.join(' | ')} |`);
    out.push(`| --- | --- | ${SOAK_PARTS.map(() => '---').join(' | ')} |`);
    for (const r of parts) out.push(`| ${r.config} | ${r.runtime} | ${SOAK_PARTS.map((p) => slopeCell(r.lateParts[p])).join(' | ')} |`);
  }
  return out.join('\n') + '\n';
}

/** Per stage, the spread over rounds of its µs per request; null when no round reported stages. */
function stageSpreads(ok: readonly RunResult[]): Record<string, Spread | null> | null {
  const withStages = ok.filter((r) => r.selfStagesPerRequestMicros !== undefined);
  if (withStages.length === 0) return null;
  const keys = new Set(withStages.flatMap((r) => Object.keys(r.selfStagesPerRequestMicros ?? {})));
  const out: Record<string, Spread | null> = {};
  for (const k of keys) out[k] = spread(withStages.map((r) => r.selfStagesPerRequestMicros?.[k] ?? 0));
  return out;
}
