import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { start } from '../index.js';
import type { Command } from './command.js';
import { EXIT, UsageError } from './command.js';
import { driveLoad } from './demo/load.js';
import { nextSteps } from './demo/next-steps.js';
import { writeDemoFlamegraphs } from './flame-demo.js';
import { createDemoServer, DEMO_ROUTES } from './demo/service.js';
import { formatSummary, summarize } from './summary.js';

function positiveInt(name: string, v: string | undefined, fallback: number, max: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < 1 || n > max) throw new UsageError(`--${name}: expected a whole number from 1 to ${max}, got ${JSON.stringify(v)}`, 'demo');
  return n;
}

/** Which Node runs the demo, in words: `npm run` puts node_modules/.bin (the node@24 devDependency) first. */
export function describeNode(execPath = process.execPath): string {
  const bundled = /[\\/]node_modules[\\/]node[\\/]/.test(execPath);
  return `Node ${process.version} (${execPath}${bundled ? ': the node@24 devDependency, which `npm run` and `npx` put first on PATH' : ''})`;
}

export const demoCommand: Command = {
  name: 'demo',
  summary: 'profile an example HTTP service under load and print what was collected',
  usage: `usage: spanfuse demo [--duration SECONDS] [--concurrency N] [--out DIR]

Start the profiler, an example HTTP service on 127.0.0.1 and a bounded load
for SECONDS (default 10) with N clients (default 8; they run in a child
process, not profiled), then print the summary and the next steps. Output
goes to DIR (default $SPANFUSE_OUTPUT_DIR, then ./spanfuse-out).

exit status: 0 done, 1 failed, 2 bad arguments or configuration`,
  async run(args) {
    const { values } = parseArgs({
      args,
      options: { duration: { type: 'string' }, concurrency: { type: 'string' }, out: { type: 'string' } },
      allowPositionals: false,
      strict: true,
    });
    const durationS = positiveInt('duration', values.duration, 10, 3600);
    const concurrency = positiveInt('concurrency', values.concurrency, 8, 256);
    const startedMs = Date.now() - 1000;
    const sf = start(values.out === undefined ? {} : { outputDir: values.out });
    if (sf === undefined) throw new UsageError('spanfuse is disabled (SPANFUSE_ENABLED=false); nothing to demo', 'demo');
    const server = createDemoServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    console.log(`spanfuse demo on ${describeNode()}, context mode ${sf.mode}`);
    console.log(`service on 127.0.0.1:${port}, ${concurrency} clients for ${durationS} s`);
    const load = await driveLoad({ port, routes: DEMO_ROUTES, durationMs: durationS * 1000, concurrency });
    await new Promise<void>((r) => server.close(() => r()));
    await sf.shutdown();
    const dir = sf.stats().outputDir;
    console.log(`load: ${load.requests} requests (${load.errors} errors): ${JSON.stringify(load.byRoute)}\n`);
    console.log(formatSummary(summarize(dir, { sinceMs: startedMs }), dir));
    const counters = sf.stats().counters;
    if (Object.keys(counters).length > 0) console.log(`\ncounters: ${JSON.stringify(counters)}`);
    console.log(`\n${writeDemoFlamegraphs(dir, startedMs)}`);
    console.log(nextSteps(dir, startedMs));
    return EXIT.ok;
  },
};
