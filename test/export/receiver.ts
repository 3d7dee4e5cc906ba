// A real HTTP server on 127.0.0.1 (port 0 unless given) that records every
// request and answers with whatever the test's handler decides.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  readonly method: string;
  readonly url: URL;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: Uint8Array | string;
  /** Wait this long before answering (slow server). */
  delayMs?: number;
}

export type Handler = (req: Received, index: number) => Reply;

export class Receiver {
  readonly received: Received[] = [];
  handler: Handler = () => ({ status: 200 });
  readonly #server: http.Server;
  readonly #timers = new Set<NodeJS.Timeout>();

  private constructor(server: http.Server) {
    this.#server = server;
  }

  static async start(port = 0): Promise<Receiver> {
    const server = http.createServer();
    const r = new Receiver(server);
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const rec: Received = {
          method: req.method ?? '',
          url: new URL(req.url ?? '/', 'http://127.0.0.1'),
          headers: req.headers,
          body: Buffer.concat(chunks),
        };
        const index = r.received.length;
        r.received.push(rec);
        const reply = r.handler(rec, index);
        const send = (): void => {
          res.writeHead(reply.status, reply.headers);
          res.end(reply.body);
        };
        if (reply.delayMs === undefined) send();
        else {
          const t = setTimeout(() => {
            r.#timers.delete(t);
            if (!res.destroyed) send();
          }, reply.delayMs);
          r.#timers.add(t);
        }
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    return r;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async close(): Promise<void> {
    for (const t of this.#timers) clearTimeout(t);
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/** A port nothing listens on (bound once, then released). */
export async function freePort(): Promise<number> {
  const r = await Receiver.start();
  const p = r.port;
  await r.close();
  return p;
}

/** Poll until `cond` holds (no time limit of its own: the test runner's timeout applies). */
export async function until(cond: () => boolean, stepMs = 10): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, stepMs));
}
