/**
 * The service under test, one fresh process per configuration and round.
 * It starts its profiler first, then loads tracing, the app and `node:http`
 * (all by dynamic import, so a preloaded or started profiler sees them load),
 * listens on 127.0.0.1:0 and talks to the harness over IPC only.
 *
 * CPU time is `process.cpuUsage()` over the measured window, which the
 * harness opens (`mark`) after warm-up and closes (`report`) when the load
 * generator has finished; requests are counted here, server side.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { getHeapSpaceStatistics } from 'node:v8';
import type { FromServer, MemoryPart, MemorySample, ServerSpec, ToServer } from './protocol.js';

const spec = JSON.parse(process.env['BENCH_SERVER_SPEC'] ?? '{}') as ServerSpec;

function send(m: FromServer): Promise<void> {
  // Resolve once the message is handed to the channel: a large message sent
  // right before disconnect() is otherwise lost.
  return new Promise((resolve) => {
    if (process.send === undefined) resolve();
    else process.send(m, undefined, {}, () => resolve());
  });
}

/** RSS split into anonymous and file-backed pages (Linux; empty elsewhere). */
function rssKinds(): { rssAnon?: number; rssFile?: number } {
  try {
    const status = readFileSync('/proc/self/status', 'utf8');
    const kb = (key: string): number | undefined => {
      const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status);
      return m?.[1] === undefined ? undefined : Number(m[1]) * 1024;
    };
    const anon = kb('RssAnon');
    const file = kb('RssFile');
    return anon === undefined || file === undefined ? {} : { rssAnon: anon, rssFile: file };
  } catch {
    return {};
  }
}

/**
 * glibc's `mallinfo2()` through koffi (from the repository's dependencies),
 * for soaks that ask for it (BENCH_MALLINFO=1): tells native memory malloc
 * hands out from what it only holds. Loading koffi adds a few MB of RSS, so
 * a soak compares slopes with it, never levels against a run without it.
 */
function mallinfo(s: ServerSpec): (() => { mallocInUse: number; mallocArena: number }) | undefined {
  try {
    const koffi = createRequire(join(s.repoRoot, 'package.json'))('koffi') as {
      load(name: string): { func(name: string, ret: unknown, args: unknown[]): () => Record<string, number | bigint> };
      struct(name: string, fields: Record<string, string>): unknown;
    };
    const fields = ['arena', 'ordblks', 'smblks', 'hblks', 'hblkhd', 'usmblks', 'fsmblks', 'uordblks', 'fordblks', 'keepcost'];
    const struct = koffi.struct('bench_mallinfo2', Object.fromEntries(fields.map((f) => [f, 'size_t'])));
    const call = koffi.load('libc.so.6').func('mallinfo2', struct, []);
    return () => {
      const m = call();
      return { mallocInUse: Number(m['uordblks']) + Number(m['hblkhd']), mallocArena: Number(m['arena']) + Number(m['hblkhd']) };
    };
  } catch (err) {
    process.stderr.write(`bench server: no mallinfo2 (${err instanceof Error ? err.message : String(err)})\n`);
    return undefined;
  }
}

async function main(): Promise<void> {
  const { startProfiler, benchRequire } = await import('./profilers.js');
  const { setupTracing } = await import('./tracing.js');
  // Profiler first (spanfuse's rule 7), unless the configuration says the app
  // registered its tracing before it.
  const early = spec.appTracingFirst ? await setupTracing(spec) : undefined;
  const profiler = await startProfiler(spec);
  const tracing = early ?? (await setupTracing(spec));
  await beforeHook(process.env['BENCH_BEFORE_HOOK']);
  const work = await import('./work.js');
  const http = await import('node:http');
  const path = await import('node:path');

  const clock = process.env['BENCH_FIXED_CPU'] === '1' ? threadCpuClock(benchRequire(spec)) : undefined;
  const meter = clock === undefined ? undefined : work.fixedWorkMeter(clock);
  const routes = work.makeRoutes(spec.unitIterations, path.join(spec.dataDir, 'data.json'), meter?.kernel);
  const fns = work.makeUniqueFunctions();
  const truth = new work.GroundTruth();
  const labeler = profiler.labeler;

  let measuring = false;
  let completed = 0;
  let errors = 0;

  const server = http.createServer((req, res) => {
    const url = req.url ?? '';
    const w = routes[url];
    if (w === undefined) {
      res.statusCode = 404;
      res.end();
      return;
    }
    tracing.inSpan(`GET ${url}`, (spanIdHex, end) => {
      const k = truth.total % work.UNIQUE_FUNCTIONS;
      truth.record(k, BigInt('0x' + spanIdHex));
      const fn = fns[k];
      if (fn === undefined) throw new Error('unreachable: unique function index');
      let p: Promise<string> | undefined;
      const run = (): void => {
        p = fn(w);
      };
      if (labeler === undefined) run();
      else labeler(spanIdHex, run);
      (p ?? Promise.reject(new Error('labeler did not run the request'))).then(
        (body) => {
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
          res.end(body);
          end();
          if (measuring) completed++;
        },
        () => {
          res.statusCode = 500;
          res.end();
          end();
          if (measuring) errors++;
        },
      );
    });
  });
  server.keepAliveTimeout = 60_000;

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr !== null ? addr.port : 0;

  let markCpu = process.cpuUsage();
  let markSelf: number | undefined;
  let markStages: Record<string, number> | undefined;
  let markNs = process.hrtime.bigint();
  const memory: MemorySample[] = [];
  let memTimer: NodeJS.Timeout | undefined;
  const gc = (globalThis as { gc?: () => void }).gc;
  const malloc = spec.gcBeforeSample && process.env['BENCH_MALLINFO'] === '1' ? mallinfo(spec) : undefined;
  const sampleMemory = (): MemorySample => {
    if (spec.gcBeforeSample && gc !== undefined) gc();
    const m = process.memoryUsage();
    return {
      tMs: Number(process.hrtime.bigint() - markNs) / 1e6,
      rss: m.rss,
      heapUsed: m.heapUsed,
      heapTotal: m.heapTotal,
      external: m.external,
      arrayBuffers: m.arrayBuffers,
      ...malloc?.(),
      ...(spec.gcBeforeSample ? rssKinds() : {}),
    };
  };

  process.on('message', (raw: ToServer) => {
    switch (raw.type) {
      case 'mark':
        completed = 0;
        errors = 0;
        memory.length = 0;
        markNs = process.hrtime.bigint();
        markCpu = process.cpuUsage();
        {
          const atMark = statsOf(profiler);
          markSelf = selfMsIn(atMark);
          markStages = stagesIn(atMark);
        }
        meter?.reset();
        measuring = true;
        memTimer = setInterval(() => {
          if (memory.length < 100_000) memory.push(sampleMemory());
        }, spec.memorySampleMs);
        memTimer.unref();
        void send({ type: 'marked' });
        break;
      case 'report': {
        const cpu = process.cpuUsage(markCpu);
        const wallMs = Number(process.hrtime.bigint() - markNs) / 1e6;
        measuring = false;
        if (memTimer !== undefined) clearInterval(memTimer);
        memory.push(sampleMemory());
        const memoryParts = memoryPartsNow();
        const profilerStats = statsOf(profiler);
        const self = selfMsIn(profilerStats);
        void send({
          type: 'report',
          report: {
            ...(self !== undefined && markSelf !== undefined ? { selfMs: self - markSelf } : {}),
            ...stagesSince(markStages, stagesIn(profilerStats)),
            ...(meter === undefined ? {} : { fixedCpuMicros: meter.estimateMicros() }),
            wallMs,
            cpuUserMicros: cpu.user,
            cpuSystemMicros: cpu.system,
            requests: completed,
            errors,
            memory,
            profilerStats,
            memoryParts,
          },
        });
        break;
      }
      case 'memory':
        void send({ type: 'memory', sample: sampleMemory() });
        break;
      case 'shutdown':
        void shutdown();
        break;
    }
  });

  const shutdown = async (): Promise<void> => {
    server.closeAllConnections();
    server.close();
    let shutdownError: string | undefined;
    try {
      await profiler.shutdown();
    } catch (err) {
      shutdownError = String(err);
    }
    await send({
      type: 'bye',
      bye: {
        groundTruth: truth.dump(),
        totalRequests: truth.total,
        ringCapacity: truth.capacity,
        spansRecording: tracing.recording(),
        ...(shutdownError === undefined ? {} : { shutdownError }),
      },
    });
    process.disconnect?.();
    setTimeout(() => process.exit(0), 200).unref();
  };

  void send({
    type: 'ready',
    port,
    info: {
      node: process.version,
      execArgv: process.execArgv,
      pid: process.pid,
    },
  });
}

main().catch((err: unknown) => {
  void send({ type: 'failed', error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  setTimeout(() => process.exit(1), 100).unref();
});

function memoryPartsNow(): Record<MemoryPart, number> {
  const parts: Record<MemoryPart, number> = { newSpace: 0, oldSpace: 0, codeSpace: 0, largeObjects: 0, otherSpaces: 0, external: 0, outsideHeap: 0 };
  let heap = 0;
  for (const s of getHeapSpaceStatistics()) {
    const size = s.physical_space_size;
    heap += size;
    if (s.space_name === 'new_space') parts.newSpace += size;
    else if (s.space_name === 'old_space') parts.oldSpace += size;
    else if (s.space_name === 'code_space') parts.codeSpace += size;
    else if (s.space_name.endsWith('large_object_space')) parts.largeObjects += size;
    else parts.otherSpaces += size;
  }
  const m = process.memoryUsage();
  parts.external = m.external;
  parts.outsideHeap = m.rss - heap - m.external;
  return parts;
}

/** The profiler's `stats()`, or what it threw. */
function statsOf(profiler: { stats(): unknown }): unknown {
  try {
    return profiler.stats();
  } catch (err) {
    return { error: String(err) };
  }
}

/** spanfuse's running total of its own periodic work (ms, `stats().selfTime`), if the stats have one. */
function selfMsIn(stats: unknown): number | undefined {
  const t = (stats as { selfTime?: Record<string, unknown> } | undefined)?.selfTime;
  if (t === undefined) return undefined;
  let ms = 0;
  for (const v of Object.values(t)) if (typeof v === 'number') ms += v;
  return ms;
}

/** spanfuse's running totals of its sliced work by stage (ms, `stats().selfTime.stagesMs`), if the stats have them. */
function stagesIn(stats: unknown): Record<string, number> | undefined {
  const st = (stats as { selfTime?: { stagesMs?: unknown } } | undefined)?.selfTime?.stagesMs;
  if (st === undefined || st === null || typeof st !== 'object') return undefined;
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(st)) if (typeof v === 'number') out[k] = v;
  return out;
}

function stagesSince(
  mark: Record<string, number> | undefined,
  now: Record<string, number> | undefined,
): { selfStagesMs?: Record<string, number> } {
  if (mark === undefined || now === undefined) return {};
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(now)) out[k] = v - (mark[k] ?? 0);
  return { selfStagesMs: out };
}

/**
 * The main thread's CPU clock in ns (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`
 * through koffi, ~0.2 µs a read), for the fixed-work meter. Only with
 * `BENCH_FIXED_CPU=1`: koffi then loads in every configuration, control
 * included, which changes the RSS figures by its size.
 */
function threadCpuClock(load: NodeJS.Require): () => number {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- koffi's handles are untyped
  const koffi: any = load('koffi');
  const clockGettime = koffi.load('libc.so.6').func('int clock_gettime(int, uint8_t *buf)') as (id: number, buf: Buffer) => number;
  const buf = Buffer.alloc(16);
  const CLOCK_THREAD_CPUTIME_ID = 3;
  return () => {
    clockGettime(CLOCK_THREAD_CPUTIME_ID, buf);
    return Number(buf.readBigInt64LE(0)) * 1e9 + Number(buf.readBigInt64LE(8));
  };
}

/**
 * `control-before-hook*`: an async_hooks `before` hook on top of the
 * control's tracing, empty or reading the active span (what a hooks-mode
 * binder does in every callback), to price the hook apart from spanfuse.
 */
async function beforeHook(kind: string | undefined): Promise<void> {
  if (kind === undefined) return;
  const { createHook } = await import('node:async_hooks');
  if (kind === 'empty') {
    createHook({ before: () => undefined }).enable();
    return;
  }
  const api = await import('@opentelemetry/api');
  let last: unknown;
  createHook({
    before: () => {
      last = api.trace.getSpan(api.context.active()) ?? last;
    },
  }).enable();
}
