/**
 * One measured run: a fresh server process for one configuration on one
 * runtime, warm-up, measured window, shutdown, then the attribution check on
 * what the profiler exported.
 */
import { cp, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { attribute, decodeProfile, profilesInDir } from './attribution.js';
import type { Attribution } from './attribution.js';
import { Child } from './child.js';
import { fillEnv, fillPlaceholders } from './configs.js';
import type { BenchConfig } from './configs.js';
import type { Options, Runtime } from './options.js';
import { ddTraceArgv, spanfuseRegisterArgv } from './profilers.js';
import type { FromLoad, FromServer, LoadResult, ServerBye, ServerReport, ServerSpec, ToLoad, ToServer } from './protocol.js';
import type { Sink } from './sink.js';
import { mean } from './stats.js';
import { SERVICE_MIXES } from './work.js';

export interface RunResult {
  readonly config: string;
  readonly runtime: string;
  readonly round: number;
  readonly ok: boolean;
  readonly error?: string;
  readonly outputTail?: string;
  readonly info?: Record<string, unknown>;
  readonly load?: LoadResult;
  readonly server?: ServerReport;
  readonly throughputRps?: number;
  readonly cpuPerRequestMicros?: number;
  readonly rssMb?: number;
  readonly heapUsedMb?: number;
  /** spanfuse's own periodic work per request (µs of its thread; `stats().selfTime`), where it reports it. */
  readonly selfWorkPerRequestMicros?: number;
  /** Its sliced part by stage, µs per request (`stats().selfTime.stagesMs`). */
  readonly selfStagesPerRequestMicros?: Readonly<Record<string, number>>;
  /** The main thread's CPU inside the fixed work per request (µs), where measured. */
  readonly fixedCpuPerRequestMicros?: number;
  /** The process's CPU outside the fixed work per request (µs): CPU per request minus the above. */
  readonly outsideCpuPerRequestMicros?: number;
  /** Profile exports that landed inside the measured window. */
  readonly exportsInWindow?: number;
  readonly sinkCounts?: Record<string, { count: number; bytes: number }>;
  readonly attribution?: Attribution | null;
  readonly bye?: Omit<ServerBye, 'groundTruth'>;
}

export type LoadChild = Child<ToLoad, FromLoad>;

const LABEL_KEY: Record<BenchConfig['profiler'], string | undefined> = {
  none: undefined,
  spanfuse: 'span_id',
  pyroscope: 'span_id',
  'dd-trace': 'span id',
  pprof: undefined,
};

export async function runOne(
  o: Options,
  cfg: BenchConfig,
  rt: Runtime,
  round: number,
  load: LoadChild,
  sink: Sink,
): Promise<RunResult> {
  const base = { config: cfg.name, runtime: rt.name, round };
  const outputDir = await mkdtemp(join(tmpdir(), `spanfuse-bench-${cfg.name}-`));
  const dataDir = await mkdtemp(join(tmpdir(), 'spanfuse-bench-data-'));
  await writeFile(join(dataDir, 'data.json'), JSON.stringify({ items: Array.from({ length: 64 }, (_, i) => ({ i, s: 'x'.repeat(48) })) }));
  sink.reset();
  const ph = { outputDir, otlpUrl: sink.url, sinkUrl: sink.url, windowMs: o.windowMs };
  const spec: ServerSpec = {
    config: cfg.name,
    profiler: cfg.profiler,
    tracing: cfg.tracing,
    labels: cfg.labels,
    appTracingFirst: cfg.appTracingFirst === true,
    spanfuseEntry: cfg.spanfuseEntry ?? 'start',
    spanfuseModule: cfg.spanfuseModule ?? o.spanfuseModule,
    spanfuseOptions: (fillPlaceholders(cfg.spanfuseOptions ?? {}, ph) ?? {}) as Record<string, unknown>,
    sinkUrl: sink.url,
    windowMs: o.windowMs,
    unitIterations: o.unitIterations,
    memorySampleMs: o.memorySampleMs,
    gcBeforeSample: o.mode === 'soak',
    repoRoot: o.repoRoot,
    dataDir,
  };
  const execArgv = [...(cfg.execArgv ?? []), ...o.serverFlags];
  if (o.mode === 'soak') execArgv.push('--expose-gc');
  if (cfg.profiler === 'dd-trace') execArgv.push(...ddTraceArgv(o.repoRoot));
  if (cfg.profiler === 'spanfuse' && cfg.spanfuseEntry === 'register') execArgv.push(...spanfuseRegisterArgv(cfg.spanfuseModule ?? o.spanfuseModule));
  const server = new Child<ToServer, FromServer>({
    nodeBin: rt.bin,
    execArgv,
    script: join(import.meta.dirname, 'server.js'),
    env: { ...process.env, ...fillEnv(cfg.env, ph), BENCH_SERVER_SPEC: JSON.stringify(spec) },
    ...(o.pin ? { cpu: o.serverCpu } : {}),
  });
  try {
    const ready = await server.next(['ready'], 60_000);
    const url = `http://127.0.0.1:${ready.port}`;
    const loadRun = { url, paths: SERVICE_MIXES[o.service], connections: o.connections };
    if (o.warmupSec > 0) {
      load.send({ type: 'run', run: { ...loadRun, durationSec: o.warmupSec } });
      await load.next(['done'], (o.warmupSec + 60) * 1000);
    }
    server.send({ type: 'mark' });
    await server.next(['marked'], 10_000);
    const markMs = Date.now();
    load.send({ type: 'run', run: { ...loadRun, durationSec: o.durationSec } });
    const loadDone = await load.next(['done'], (o.durationSec + 60) * 1000);
    server.send({ type: 'report' });
    const report = (await server.next(['report'], 30_000)).report;
    const endMs = Date.now();
    const exportsInWindow = await countExports(cfg, outputDir, sink, markMs, endMs);
    server.send({ type: 'shutdown' });
    const bye = (await server.next(['bye'], 60_000)).bye;
    await server.waitExit(10_000);

    const attribution = await attributionFor(cfg, outputDir, sink, bye);
    if (o.keepDir !== undefined) await keep(o.keepDir, `${rt.name}-${cfg.name}-r${round}`, outputDir, sink);
    const sec = report.wallMs / 1000;
    const cpuMicros = report.cpuUserMicros + report.cpuSystemMicros;
    const mem = report.memory;
    const { groundTruth: _gt, ...byeRest } = bye;
    return {
      ...base,
      ok: true,
      info: ready.info,
      load: loadDone.result,
      server: { ...report, memory: o.mode === 'soak' ? mem : [] },
      throughputRps: report.requests / sec,
      cpuPerRequestMicros: report.requests > 0 ? cpuMicros / report.requests : Number.NaN,
      rssMb: mean(mem.map((m) => m.rss)) / 2 ** 20,
      heapUsedMb: mean(mem.map((m) => m.heapUsed)) / 2 ** 20,
      ...(report.selfMs !== undefined && report.requests > 0 ? { selfWorkPerRequestMicros: (report.selfMs * 1000) / report.requests } : {}),
      ...(report.selfStagesMs !== undefined && report.requests > 0
        ? { selfStagesPerRequestMicros: Object.fromEntries(Object.entries(report.selfStagesMs).map(([k, ms]) => [k, (ms * 1000) / report.requests])) }
        : {}),
      ...(report.fixedCpuMicros !== undefined && report.requests > 0
        ? {
            fixedCpuPerRequestMicros: report.fixedCpuMicros / report.requests,
            outsideCpuPerRequestMicros: (cpuMicros - report.fixedCpuMicros) / report.requests,
          }
        : {}),
      exportsInWindow,
      sinkCounts: sink.counts(),
      attribution,
      bye: byeRest,
    };
  } catch (err) {
    server.kill();
    await server.waitExit(5000);
    return { ...base, ok: false, error: err instanceof Error ? err.message : String(err), outputTail: server.outputTail };
  } finally {
    await rm(outputDir, { recursive: true, force: true });
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function countExports(cfg: BenchConfig, outputDir: string, sink: Sink, fromMs: number, toMs: number): Promise<number> {
  if (cfg.profiler === 'none') return 0;
  if (cfg.profiler === 'spanfuse') {
    let n = 0;
    let entries: string[] = [];
    try {
      entries = (await readdir(outputDir, { recursive: true })).map(String);
    } catch {
      return 0;
    }
    for (const e of entries) {
      try {
        const s = await stat(join(outputDir, e));
        if (s.isFile() && s.mtimeMs >= fromMs && s.mtimeMs <= toMs) n++;
      } catch {
        // removed meanwhile
      }
    }
    return n + sink.uploadsBetween(fromMs, toMs);
  }
  return sink.uploadsBetween(fromMs, toMs);
}

async function attributionFor(cfg: BenchConfig, outputDir: string, sink: Sink, bye: ServerBye): Promise<Attribution | null> {
  const key = LABEL_KEY[cfg.profiler];
  if (key === undefined) return null;
  const complete = bye.totalRequests <= bye.ringCapacity;
  let profiles;
  if (cfg.profiler === 'spanfuse') {
    profiles = await profilesInDir(outputDir);
  } else {
    profiles = [];
    for (const r of await sink.profiles()) {
      const p = decodeProfile(r.bytes);
      if (p !== undefined) profiles.push(p);
    }
  }
  const a = attribute(profiles, key, bye.groundTruth, complete);
  if (!bye.spansRecording) return { ...a, note: 'some requests ran without a recording span' };
  if (a.profiles === 0) return { ...a, note: 'no profile received' };
  return a;
}

async function keep(keepDir: string, name: string, outputDir: string, sink: Sink): Promise<void> {
  const dir = join(keepDir, name);
  await mkdir(dir, { recursive: true });
  await cp(outputDir, join(dir, 'output'), { recursive: true });
  let i = 0;
  for (const p of await sink.profiles()) await writeFile(join(dir, `${p.source}-${i++}-${p.name.replace(/[^\w.-]/g, '_')}`), p.bytes);
}
