import http from 'node:http';

export interface LoadResult {
  readonly requests: number;
  readonly errors: number;
  readonly byRoute: Record<string, number>;
}

/**
 * A bounded closed-loop load: `concurrency` workers request the routes in turn
 * until `durationMs` has passed (or `maxRequests` were sent).
 */
export async function driveLoad(opts: {
  port: number;
  routes: readonly string[];
  durationMs: number;
  concurrency: number;
  maxRequests?: number;
}): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.concurrency });
  const deadline = Date.now() + opts.durationMs;
  const max = opts.maxRequests ?? 1_000_000;
  const byRoute: Record<string, number> = {};
  let sent = 0;
  let errors = 0;
  const one = (path: string): Promise<void> =>
    new Promise((resolve) => {
      const req = http.get({ host: '127.0.0.1', port: opts.port, path, agent }, (res) => {
        if (res.statusCode !== 200) errors++;
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', () => {
        errors++;
        resolve();
      });
    });
  const worker = async (w: number): Promise<void> => {
    for (let i = w; Date.now() < deadline && sent < max; i++) {
      const route = opts.routes[i % opts.routes.length] ?? '/';
      sent++;
      byRoute[route] = (byRoute[route] ?? 0) + 1;
      await one(route);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, (_, w) => worker(w)));
  agent.destroy();
  return { requests: sent, errors, byRoute };
}
