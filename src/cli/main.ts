#!/usr/bin/env node
/**
 * The `spanfuse` command.
 *   spanfuse demo [--duration S] [--concurrency N] [--out DIR]
 *   spanfuse summary [DIR] [--json]
 */
import { existsSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, start, VERSION } from '../index.js';
import { createDemoServer, DEMO_ROUTES } from './demo/service.js';
import { driveLoad } from './demo/load.js';
import { formatSummary, summarize } from './summary.js';

const USAGE = `spanfuse ${VERSION}

usage:
  spanfuse demo [--duration SECONDS] [--concurrency N] [--out DIR]
      start the profiler, an example HTTP service and a bounded load for
      SECONDS (default 10), then print what was collected
  spanfuse summary [DIR] [--json]
      summarize an output folder (default ./spanfuse-out)
  spanfuse help | version

Profiling your own app: node --import spanfuse/register app.js
Configuration: OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, SPANFUSE_* (see README).`;

class UsageError extends Error {}

function positiveInt(name: string, v: string | undefined, fallback: number, max: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < 1 || n > max) throw new UsageError(`--${name}: expected a whole number from 1 to ${max}, got ${JSON.stringify(v)}`);
  return n;
}

async function demo(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { duration: { type: 'string' }, concurrency: { type: 'string' }, out: { type: 'string' } },
    strict: true,
  });
  const durationS = positiveInt('duration', values.duration, 10, 3600);
  const concurrency = positiveInt('concurrency', values.concurrency, 8, 256);
  const startedMs = Date.now() - 1000;
  const sf = start(values.out === undefined ? {} : { outputDir: values.out });
  if (sf === undefined) throw new UsageError('spanfuse is disabled (SPANFUSE_ENABLED=false); nothing to demo');
  const server = createDemoServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  console.log(`spanfuse demo: service on 127.0.0.1:${port}, ${concurrency} clients for ${durationS} s, context mode ${sf.mode}`);
  const load = await driveLoad({ port, routes: DEMO_ROUTES, durationMs: durationS * 1000, concurrency });
  await new Promise<void>((r) => server.close(() => r()));
  await sf.shutdown();
  const dir = sf.stats().outputDir;
  console.log(`load: ${load.requests} requests (${load.errors} errors): ${JSON.stringify(load.byRoute)}\n`);
  console.log(formatSummary(summarize(dir, { sinceMs: startedMs }), dir));
  const counters = sf.stats().counters;
  if (Object.keys(counters).length > 0) console.log(`\ncounters: ${JSON.stringify(counters)}`);
}

function summary(args: string[]): void {
  const json = args.includes('--json');
  const dir = resolve(args.find((a) => a !== '--json') ?? './spanfuse-out');
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UsageError(`summary: ${dir} is not a folder; give the output folder (SPANFUSE_OUTPUT_DIR)`);
  const s = summarize(dir);
  console.log(json ? JSON.stringify(s, null, 2) : formatSummary(s, dir));
}

async function main(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  switch (cmd) {
    case 'demo':
      return demo(rest);
    case 'summary':
      return summary(rest);
    case 'version':
    case '--version':
      console.log(VERSION);
      return;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      console.log(USAGE);
      return;
    default:
      throw new UsageError(`unknown command ${JSON.stringify(cmd)}`);
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError || err instanceof ConfigError || (err instanceof Error && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS'))) {
    console.error(`spanfuse: ${err.message}\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  console.error(err);
  process.exitCode = 1;
});
