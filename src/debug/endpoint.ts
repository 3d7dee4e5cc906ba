import { createHash, timingSafeEqual } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import { suppressTracing } from '../tracing/sdk.js';
import type { DebugConfig } from '../config/index.js';
import type { Diagnostics } from '../core/diagnostics.js';
import { encodePprofGzip } from '../profile/index.js';
import { nowUnixNs } from '../sampler/index.js';
import { diffDocument } from './diff.js';
import { flameDocument } from './flame.js';
import { renderHtml } from './html.js';
import { mergeProfiles } from './merge.js';
import { FlameError, SampleStore } from './model.js';
import { addProfile } from './read-pprof.js';
import type { Metric } from './tree.js';
import { tailsPage } from './tails-page.js';
import type { WindowRing } from './window-ring.js';
import type * as Http from 'node:http';
import { http } from '../core/builtins.js';

export interface DebugEndpointOptions {
  readonly config: DebugConfig;
  readonly ring: WindowRing;
  /** Close the current window now (it is exported like any other). */
  readonly closeWindow: () => void;
  readonly windowMs: number;
  readonly diagnostics: Diagnostics;
}

const MAX_SECONDS = 300;
const MAX_CAPTURES = 2;

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The local debug endpoint: `/debug/pprof/profile?seconds=N` (gzip pprof,
 * what `go tool pprof http://...` fetches), `/debug/tails` (recent tail
 * spans, linking to their flamegraphs), `/debug/flame?span=ID` (also
 * `trace=`, `operation=` with `tail=1`/`normal=1`) and `/debug/diff?operation=`.
 *
 * It never starts a second wall profiler (@datadog/pprof has one per thread):
 * a capture waits N seconds, then takes the windows that cover them from the
 * ring of scrubbed windows, cutting the current window short only when its
 * natural end is too far away for the client, and keeps the samples taken
 * inside the N seconds (by their timestamps).
 */
export class DebugEndpoint {
  readonly #opts: DebugEndpointOptions;
  readonly #server: Http.Server;
  readonly #tokenHash: Buffer | undefined;
  readonly #aborts = new AbortController();
  #captures = 0;
  #url: string | undefined;
  #stopped: Promise<void> | undefined;

  constructor(opts: DebugEndpointOptions) {
    this.#opts = opts;
    this.#tokenHash = opts.config.token === undefined ? undefined : sha256(opts.config.token);
    this.#server = http.createServer((req, res) => {
      // Never traced: spanfuse's own requests must not become spans or samples of a span.
      context.with(suppressTracing(ROOT_CONTEXT), () => {
        this.#handle(req, res).catch((err: unknown) => {
          this.#opts.diagnostics.error('debug.request', err);
          if (!res.headersSent) send(res, 500, 'text/plain', 'internal error\n');
          else res.destroy();
        });
      });
    });
    // An app's HTTP instrumentation patches http.Server.prototype.emit to start
    // a SERVER span per request; this server's own emit skips the patch.
    // eslint-disable-next-line @typescript-eslint/unbound-method
    this.#server.emit = EventEmitter.prototype.emit;
    this.#server.on('error', (err) => this.#opts.diagnostics.error('debug.listen', err));
  }

  /** `http://host:port` once listening. */
  get url(): string | undefined {
    return this.#url;
  }

  /** Listen; never throws (a failure is counted and reported once). */
  start(): Promise<void> {
    const { host, port } = this.#opts.config;
    return new Promise((resolve) => {
      const onError = (err: Error): void => {
        this.#opts.diagnostics.error('debug.listen', err);
        resolve();
      };
      this.#server.once('error', onError);
      context.with(suppressTracing(ROOT_CONTEXT), () => {
        this.#server.listen(port, host, () => {
          this.#server.off('error', onError);
          // The endpoint must never keep the app alive.
          this.#server.unref();
          const a = this.#server.address() as AddressInfo;
          this.#url = `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
          resolve();
        });
      });
    });
  }

  stop(): Promise<void> {
    this.#stopped ??= new Promise((resolve) => {
      this.#aborts.abort();
      if (!this.#server.listening) {
        resolve();
        return;
      }
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
    return this.#stopped;
  }

  async #handle(req: Http.IncomingMessage, res: Http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (!this.#hostAllowed(req.headers.host)) return send(res, 403, 'text/plain', 'forbidden host\n');
    if (!this.#authorized(req, url)) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="spanfuse"');
      return send(res, 401, 'text/plain', 'unauthorized: give the token as "Authorization: Bearer TOKEN" (or ?token=)\n');
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'text/plain', 'only GET\n');
    const keep = url.searchParams.get('token') === null ? '' : `token=${encodeURIComponent(url.searchParams.get('token') ?? '')}`;
    try {
      switch (url.pathname) {
        case '/':
        case '/debug':
        case '/debug/':
          return send(res, 200, 'text/html; charset=utf-8', indexPage(keep));
        case '/debug/pprof/profile':
          return await this.#profile(url, res);
        case '/debug/tails':
          return send(res, 200, 'text/html; charset=utf-8', tailsPage(this.#opts.ring.windows(), keep));
        case '/debug/flame':
          return send(res, 200, 'text/html; charset=utf-8', this.#flame(url));
        case '/debug/diff':
          return send(res, 200, 'text/html; charset=utf-8', this.#diff(url));
        default:
          return send(res, 404, 'text/plain', 'not found; see /debug/\n');
      }
    } catch (err) {
      if (err instanceof HttpError) return send(res, err.status, 'text/plain', `${err.message}\n`);
      if (err instanceof FlameError) return send(res, err.code === 'not-found' ? 404 : 400, 'text/plain', `${err.message}\n`);
      throw err;
    }
  }

  #hostAllowed(host: string | undefined): boolean {
    if (this.#opts.config.allowRemote) return true;
    // A loopback endpoint answers loopback names only (no DNS rebinding from a browser).
    const name = (host ?? '').replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
    return name === 'localhost' || name === '::1' || /^127\.\d+\.\d+\.\d+$/.test(name);
  }

  #authorized(req: Http.IncomingMessage, url: URL): boolean {
    if (this.#tokenHash === undefined) return true;
    const header = req.headers.authorization;
    const given = header !== undefined && /^Bearer\s+/i.test(header) ? header.replace(/^Bearer\s+/i, '') : url.searchParams.get('token');
    return given !== null && timingSafeEqual(sha256(given), this.#tokenHash);
  }

  async #profile(url: URL, res: Http.ServerResponse): Promise<void> {
    const raw = url.searchParams.get('seconds') ?? '30';
    const seconds = Number(raw);
    if (!/^\d+$/.test(raw) || seconds < 1 || seconds > MAX_SECONDS) throw new HttpError(400, `seconds: expected a whole number from 1 to ${MAX_SECONDS}, got ${JSON.stringify(raw)}`);
    if (this.#captures >= MAX_CAPTURES) throw new HttpError(429, `${MAX_CAPTURES} captures are running; try again later`);
    this.#captures++;
    try {
      const from = nowUnixNs();
      const signal = this.#aborts.signal;
      await sleep(seconds * 1000, signal);
      const to = nowUnixNs();
      const ring = this.#opts.ring;
      // go tool pprof gives up after 1.5 x seconds: wait for the window's own
      // end when it comes soon enough, otherwise close it now.
      const last = ring.windows().at(-1);
      const naturalEnd = last === undefined ? undefined : last.endUnixNs + BigInt(this.#opts.windowMs) * 1_000_000n;
      const slackNs = BigInt(Math.min(2000, seconds * 250)) * 1_000_000n;
      if (naturalEnd === undefined || naturalEnd > to + slackNs) this.#opts.closeWindow();
      const arrived = await ring.waitForEnd(to, this.#opts.windowMs + 5000, signal);
      if (!arrived) throw new HttpError(503, 'no profile window arrived for this capture (is the profiler running?)');
      const windows = ring.windows().filter((w) => w.endUnixNs >= from && w.startUnixNs <= to);
      const merged = mergeProfiles(
        windows.map((w) => w.wall),
        from,
        to,
        [`spanfuse debug capture of ${seconds} s from ${windows.length} window(s): ${windows.map((w) => w.profileId).join(',')}`],
      );
      const body = await encodePprofGzip(merged);
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Disposition': 'attachment; filename="profile.pb.gz"', 'Content-Length': body.length });
      res.end(body);
    } finally {
      this.#captures--;
    }
  }

  /**
   * The windows in memory as a sample store; with `id` (a span or trace id),
   * only windows whose string table holds it, which keeps a span's page cheap.
   */
  #liveStore(id?: string): { store: SampleStore; spans: []; inputs: string[] } {
    const store = new SampleStore();
    const wanted = id?.toLowerCase();
    for (const w of this.#opts.ring.windows()) {
      if (wanted !== undefined && !w.wall.stringTable.strings.includes(wanted)) continue;
      addProfile(store, w.wall, { file: `window ${w.profileId}`, profileId: w.profileId, live: true, startNs: Number(w.startUnixNs) });
    }
    const held = this.#opts.ring.windows().length;
    if (store.rows.length === 0 && wanted !== undefined) throw new HttpError(404, `no samples of ${wanted.length === 16 ? 'span' : 'trace'} ${wanted} in the ${held} windows in memory`);
    if (store.rows.length === 0) throw new HttpError(404, 'no samples in memory yet; wait for a window to close');
    return { store, spans: [], inputs: ['live windows'] };
  }

  #flame(url: URL): string {
    const q = url.searchParams;
    const span = q.get('span') ?? undefined;
    const trace = q.get('trace') ?? undefined;
    const operation = q.get('operation') ?? undefined;
    if (span === undefined && trace === undefined && operation === undefined) throw new HttpError(400, 'give span=ID, trace=ID or operation=NAME');
    const doc = flameDocument(this.#liveStore(span ?? trace), { spanId: span, traceId: trace, operation, tail: q.get('tail') === '1', normal: q.get('normal') === '1' }, metricParam(q.get('metric')));
    return renderHtml(doc);
  }

  #diff(url: URL): string {
    const operation = url.searchParams.get('operation');
    if (operation === null) throw new HttpError(400, 'give operation=NAME');
    return renderHtml(diffDocument(this.#liveStore(), operation, metricParam(url.searchParams.get('metric'))));
  }
}

function metricParam(v: string | null): Metric {
  if (v === null) return 'wall';
  if (v === 'wall' || v === 'cpu' || v === 'offcpu' || v === 'samples') return v;
  throw new HttpError(400, `metric: expected wall, cpu, offcpu or samples, got ${JSON.stringify(v)}`);
}

function sha256(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

function send(res: Http.ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' });
  res.end(body);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new HttpError(503, 'endpoint shutting down'));
      return;
    }
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    t.unref();
    const onAbort = (): void => {
      clearTimeout(t);
      reject(new HttpError(503, 'endpoint shutting down'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function indexPage(keep: string): string {
  const q = keep === '' ? '' : `?${keep}`;
  const a = keep === '' ? '' : `&${keep}`;
  return `<!doctype html><html><head><meta charset="utf-8"><title>spanfuse debug</title></head><body style="font:14px system-ui,sans-serif;margin:20px">
<h1 style="font-size:18px">spanfuse debug endpoint</h1><ul>
<li><a href="/debug/tails${q}">recent tail spans</a> (each links to its flamegraph)</li>
<li><a href="/debug/pprof/profile?seconds=10${a}">/debug/pprof/profile?seconds=N</a>: gzip pprof (<code>go tool pprof URL</code>)</li>
<li>/debug/flame?span=ID | trace=ID | operation=NAME[&amp;tail=1|normal=1][&amp;metric=cpu]</li>
<li>/debug/diff?operation=NAME: tail vs normal</li></ul></body></html>`;
}
