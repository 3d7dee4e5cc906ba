/**
 * Loopback receivers the profilers export to, in the harness process (which
 * is pinned to the load generator's core, never the server's). They only
 * buffer what arrives; decoding waits until the measured window is over.
 *
 * - Pyroscope ingest: `POST /ingest` with the gzipped pprof as the body.
 * - Datadog agent: `POST /profiling/v1/input` (multipart, one part per
 *   profile), trace endpoints answered like an agent, anything else `{}`.
 * - OTLP/HTTP: `/v1/traces`, `/v1development/profiles`, ... counted.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';

export interface ReceivedProfile {
  readonly source: 'pyroscope' | 'dd-agent';
  /** Part name for multipart uploads (e.g. `wall.pprof`), else the path. */
  readonly name: string;
  readonly bytes: Buffer;
}

interface RawUpload {
  readonly path: string;
  readonly contentType: string;
  readonly body: Buffer;
}

export class Sink {
  readonly #server: Server;
  #uploads: RawUpload[] = [];
  #counts = new Map<string, { count: number; bytes: number }>();
  /** Arrival times (ms since epoch) of profile uploads, any protocol. */
  #profileTimes: number[] = [];
  #url = '';

  constructor() {
    this.#server = createServer((req, res) => {
      void readBody(req).then((body) => {
        const path = (req.url ?? '/').split('?')[0] ?? '/';
        const c = this.#counts.get(path) ?? { count: 0, bytes: 0 };
        c.count++;
        c.bytes += body.length;
        this.#counts.set(path, c);
        if (path === '/ingest' || path === '/profiling/v1/input' || path === '/v1development/profiles') {
          this.#profileTimes.push(Date.now());
        }
        if (path === '/ingest' || path === '/profiling/v1/input') {
          this.#uploads.push({ path, contentType: String(req.headers['content-type'] ?? ''), body });
        }
        if (path.startsWith('/v1/') || path.startsWith('/v1development/')) {
          res.writeHead(200, { 'content-type': 'application/x-protobuf' });
          res.end();
        } else if (path === '/info') {
          res.writeHead(404);
          res.end();
        } else if (/^\/v0\.[0-9]+\/traces$/.test(path)) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"rate_by_service":{}}');
        } else {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{}');
        }
      });
    });
    this.#server.keepAliveTimeout = 1000;
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    const addr = this.#server.address();
    const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
    this.#url = `http://127.0.0.1:${port}`;
    return this.#url;
  }

  get url(): string {
    return this.#url;
  }

  /** Forget what was received (between server runs). */
  reset(): void {
    this.#uploads = [];
    this.#counts = new Map();
    this.#profileTimes = [];
  }

  /** Profile uploads that arrived in [fromMs, toMs]. */
  uploadsBetween(fromMs: number, toMs: number): number {
    return this.#profileTimes.filter((t) => t >= fromMs && t <= toMs).length;
  }

  counts(): Record<string, { count: number; bytes: number }> {
    return Object.fromEntries(this.#counts);
  }

  /** Every profile received so far, multipart uploads split into parts. */
  async profiles(): Promise<ReceivedProfile[]> {
    const out: ReceivedProfile[] = [];
    for (const u of this.#uploads) {
      if (u.path === '/ingest') {
        out.push({ source: 'pyroscope', name: u.path, bytes: u.body });
        continue;
      }
      try {
        const form = await new Response(u.body, { headers: { 'content-type': u.contentType } }).formData();
        for (const [name, value] of form.entries()) {
          if (typeof value === 'string') continue;
          if (!name.endsWith('.pprof') && !value.name.endsWith('.pprof')) continue;
          out.push({ source: 'dd-agent', name: value.name || name, bytes: Buffer.from(await value.arrayBuffer()) });
        }
      } catch {
        // An upload we cannot parse counts as no profile; the counts show it arrived.
      }
    }
    return out;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', () => resolve(Buffer.concat(chunks)));
  });
}
