import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readPprof, wallFiles } from '../support/pprof.js';
import { ROOT } from '../support/child.js';

/** One exported span, as the app's exporter (or spans.jsonl) had it. */
export interface AppSpan {
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly attributes: Record<string, unknown>;
}

export interface CaseRun {
  readonly code: number | null;
  readonly stderr: string;
  readonly spans: AppSpan[];
  readonly fusion: Record<string, unknown> | undefined;
  /** span_id labels of samples taken in the request code (empty without spanfuse). */
  readonly requestSampleSpanIds: string[];
  /** All samples taken in the request code. */
  readonly requestSamples: number;
}

export interface CaseSpec {
  /** `cjs` runs app.cjs, `esm` runs app.js. */
  readonly module: 'cjs' | 'esm';
  readonly framework: 'express' | 'fastify' | 'http';
  /** Preload arguments in order, e.g. ['--require', 'spanfuse/register', '--require', OTEL_PRELOAD_CJS]. */
  readonly preload: string[];
  readonly env: Record<string, string>;
  /** The app's spans come from an OTLP/JSON exporter (zero-code start) instead of otel.cjs's file. */
  readonly otlp?: boolean;
  /** The app's spans are spanfuse's `spans.jsonl` (no OpenTelemetry in the app). */
  readonly spansJsonl?: boolean;
}

const fixtures = fileURLToPath(new URL('../fixtures/compat-app/', import.meta.url));
export const OTEL_PRELOAD_CJS = join(fixtures, 'otel-preload.cjs');
export const OTEL_PRELOAD_ESM = join(fixtures, 'otel-preload-esm.js');
export const ZERO_CODE = '@opentelemetry/auto-instrumentations-node/register';

/** Requests per case: enough for tails in budget mode and a few thousand request samples. */
export const REQUESTS = 120;
const CONCURRENCY = 4;
/** Every SLOW_EVERY-th request burns SLOW_MS (a tail under the 12 ms budget); the rest FAST_MS. */
const SLOW_EVERY = 12;
const SLOW_MS = 30;
const FAST_MS = 3;

/** Run the app once under `spec` with real HTTP load; everything it and spanfuse left behind. */
export async function runCase(spec: CaseSpec, timeoutMs = 90_000): Promise<CaseRun> {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-compat-'));
  const receiver = spec.otlp === true ? await startOtlpReceiver() : undefined;
  try {
    const app = join(fixtures, spec.module === 'cjs' ? 'app.cjs' : 'app.js');
    const env: Record<string, string> = {
      SPANFUSE_OUTPUT_DIR: join(dir, 'out'),
      SPANFUSE_SAMPLING_INTERVAL_US: '1000',
      SPANFUSE_WINDOW_MS: '1000',
      SPANFUSE_TAIL_THRESHOLD_MS: '12',
      SPANFUSE_THREAD_STATE: 'false',
      SPANFUSE_HEAP_ENABLED: 'false',
      COMPAT_FRAMEWORK: spec.framework,
      COMPAT_SPANS_OUT: join(dir, 'app-spans.json'),
      OTEL_METRICS_EXPORTER: 'none',
      OTEL_LOGS_EXPORTER: 'none',
      ...(receiver === undefined
        ? {}
        : {
            OTEL_TRACES_EXPORTER: 'otlp',
            OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
            OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://127.0.0.1:${receiver.port}/v1/traces`,
            OTEL_BSP_SCHEDULE_DELAY: '200',
            OTEL_NODE_RESOURCE_DETECTORS: 'none',
          }),
      ...spec.env,
    };
    const child = startChild([...spec.preload, app], env, timeoutMs);
    const port = await child.port;
    await load(port);
    await get(port, '/shutdown');
    const exit = await child.exit;
    let spans: AppSpan[];
    if (receiver !== undefined) {
      spans = receiver.spans;
    } else if (spec.spansJsonl === true) {
      spans = readJsonl(join(dir, 'out', 'spans.jsonl'));
    } else {
      const file = join(dir, 'app-spans.json');
      const parsed = existsSync(file)
        ? (JSON.parse(readFileSync(file, 'utf8')) as { spans: AppSpan[] })
        : { spans: [] };
      spans = parsed.spans;
    }
    const ids: string[] = [];
    let requestSamples = 0;
    const outDir = join(dir, 'out');
    if (existsSync(outDir)) {
      for (const f of wallFiles(outDir)) {
        for (const s of readPprof(f).samples) {
          if (!s.frames.includes('compat_request_work')) continue;
          const n = s.values[0] ?? 1;
          requestSamples += n;
          const id = s.labels.span_id;
          for (let i = 0; i < n; i++) ids.push(typeof id === 'string' ? id : '');
        }
      }
    }
    const fusionLine = /^FUSION (.*)$/m.exec(exit.stdout)?.[1];
    const fusion = fusionLine === undefined ? undefined : (JSON.parse(fusionLine) as Record<string, unknown> | null) ?? undefined;
    return { code: exit.code, stderr: exit.stderr, spans, fusion, requestSampleSpanIds: ids, requestSamples };
  } finally {
    receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Span names with their counts, sorted: what "the same spans" compares. */
export function nameCounts(spans: readonly AppSpan[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of [...spans].sort((a, b) => a.name.localeCompare(b.name))) out[s.name] = (out[s.name] ?? 0) + 1;
  return out;
}

/** Spans that are nobody's parent among `spans`: the innermost ones. */
export function leafIds(spans: readonly AppSpan[]): Set<string> {
  const parents = new Set(spans.map((s) => s.parentSpanId).filter((p): p is string => p !== undefined));
  return new Set(spans.filter((s) => !parents.has(s.spanId)).map((s) => s.spanId));
}

function readJsonl(path: string): AppSpan[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as AppSpan);
}

interface Child {
  readonly port: Promise<number>;
  readonly exit: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

function startChild(args: string[], env: Record<string, string>, timeoutMs: number): Child {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const exit = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  const port = new Promise<number>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      const m = /PORT (\d+)/.exec(stdout);
      if (m) resolve(Number(m[1]));
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    void exit.then(({ code }) => reject(new Error(`app exited (${code}) before listening:\n${stderr}`)));
  });
  return { port, exit };
}

/** REQUESTS requests over CONCURRENCY keep-alive connections; bounded in count. */
async function load(port: number): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < REQUESTS) {
      const i = next++;
      const ms = i % SLOW_EVERY === SLOW_EVERY - 1 ? SLOW_MS : FAST_MS;
      await get(port, `/work/${i}?ms=${ms}`, agent);
    }
  };
  try {
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  } finally {
    agent.destroy();
  }
}

function get(port: number, path: string, agent?: Agent): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: agent ?? false, timeout: 30_000 }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`${path}: HTTP ${res.statusCode}`))));
    });
    req.on('timeout', () => req.destroy(new Error(`${path}: timed out`)));
    req.on('error', reject);
    req.end();
  });
}

interface OtlpReceiver {
  readonly port: number;
  readonly spans: AppSpan[];
  close(): void;
}

/** An OTLP/HTTP JSON trace receiver on port 0, for OpenTelemetry's zero-code start. */
async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: AppSpan[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        spans.push(...decodeOtlpJson(Buffer.concat(chunks).toString('utf8')));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, spans, close: () => server.close() };
}

interface OtlpValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
}

function decodeOtlpJson(text: string): AppSpan[] {
  const body = JSON.parse(text) as {
    resourceSpans?: {
      scopeSpans?: {
        spans?: { name: string; traceId: string; spanId: string; parentSpanId?: string; attributes?: { key: string; value: OtlpValue }[] }[];
      }[];
    }[];
  };
  const out: AppSpan[] = [];
  for (const rs of body.resourceSpans ?? []) {
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        const attributes: Record<string, unknown> = {};
        for (const a of s.attributes ?? []) {
          attributes[a.key] = a.value.stringValue ?? a.value.boolValue ?? a.value.doubleValue ?? Number(a.value.intValue);
        }
        out.push({
          name: s.name,
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId === '' ? undefined : s.parentSpanId,
          attributes,
        });
      }
    }
  }
  return out;
}
