// The demo's load, in a process of its own (see driveLoad in load.ts):
// options as JSON in argv[2], the result sent back over IPC.
import http from 'node:http';
import type { LoadOptions, LoadResult } from './load.js';

/**
 * A bounded closed-loop load: `concurrency` workers request the routes in turn
 * until `durationMs` has passed (or `maxRequests` were sent).
 */
async function runLoad(opts: LoadOptions): Promise<LoadResult> {
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

// The demo ended without waiting for the result (it failed, or was
// stopped): stop sending requests to a service that is gone.
process.once('disconnect', () => process.exit(0));
const result = await runLoad(JSON.parse(process.argv[2] ?? '{}') as LoadOptions);
process.send?.(result, undefined, {}, () => process.disconnect());
