import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fixture, lastJsonLine, runNode } from '../support/child.js';

function spansOf(dir: string): Array<{ name: string; attributes: Record<string, unknown> }> {
  const p = join(dir, 'spans.jsonl');
  if (!existsSync(p)) return [];
  return readFileSync(p, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { name: string; attributes: Record<string, unknown> });
}

test('the first span of a process, blocked 200 ms in read(), gets kernel counters and its off-CPU time', { skip: process.platform !== 'linux' }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-first-'));
  const r = await runNode(['--import', 'spanfuse/register', fixture('worker-first-span-app')], {
    SPANFUSE_OUTPUT_DIR: dir,
    SPANFUSE_TAIL_THRESHOLD_MS: '150',
    SPANFUSE_SAMPLING_INTERVAL_US: '2000',
    BLOCK_MS: '200',
  });
  assert.equal(r.code, 0, r.stderr);
  const span = spansOf(dir).find((s) => s.name === 'first-read');
  assert.ok(span, 'first-read not in spans.jsonl');
  const a = span.attributes;
  assert.ok(Number(a['test.blocked_ms']) >= 150, `blocked only ${String(a['test.blocked_ms'])} ms`);
  assert.equal(a['profiler.tail'], true);
  assert.equal(typeof a['profiler.ctx_switches.voluntary'], 'number', `no voluntary switches: ${JSON.stringify(a)}`);
  // Blocked in read(): the thread slept at least once.
  assert.ok(Number(a['profiler.ctx_switches.voluntary']) >= 1, JSON.stringify(a));
  assert.ok(Number(a['profiler.offcpu.time_ns']) >= 100e6, `off-CPU ${String(a['profiler.offcpu.time_ns'])} misses the 200 ms read`);
});

const LATE_APP = `
import http from 'node:http';
import { start } from 'spanfuse';
const server = http.createServer().listen(0, '127.0.0.1', async () => {
  const first = start();
  await first.shutdown();
  const second = start();
  await second.shutdown();
  server.close();
});
`;

test('starting after server.listen() warns once, with the fix; the preload does not warn', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-late-'));
  const late = await runNode(['--input-type=module', '-e', LATE_APP], { SPANFUSE_OUTPUT_DIR: dir });
  assert.equal(late.code, 0, late.stderr);
  const warnings = late.stderr.split('\n').filter((l) => l.includes('SPANFUSE_LATE_START'));
  assert.equal(warnings.length, 1, late.stderr);
  assert.match(warnings[0]!, /a server is already listening/);
  assert.match(warnings[0]!, /--import spanfuse\/register/);
  const early = await runNode(['--import', 'spanfuse/register', '--input-type=module', '-e', "import http from 'node:http'; const s = http.createServer().listen(0, '127.0.0.1', () => s.close());"], { SPANFUSE_OUTPUT_DIR: dir });
  assert.equal(early.code, 0, early.stderr);
  assert.doesNotMatch(early.stderr, /SPANFUSE_LATE_START/);
});

// A worker (eval: true, so the preload injects itself) reports which
// OpenTelemetry SDK modules it has loaded before and after asking for a
// tracer, and the span it then makes; the main thread, whether the SDK was
// loaded when the app's code began. The worker's code is an ES module:
// it inherits --input-type=module.
const SDK_APP = `
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
const mainSdk = Object.keys(createRequire(process.cwd() + '/').cache).filter((f) => /@opentelemetry[\\\\/]sdk-trace-base[\\\\/]/.test(f)).length;
const worker = new Worker(\`
  import { createRequire } from 'node:module';
  import { parentPort } from 'node:worker_threads';
  const cache = createRequire(process.cwd() + '/').cache;
  const sdk = () => Object.keys(cache).filter((f) => /@opentelemetry[\\\\/](sdk-trace-base|resources|core)[\\\\/]/.test(f)).length;
  const before = sdk();
  const { trace } = await import('@opentelemetry/api');
  const span = trace.getTracer('sdk-probe').startSpan('worker-span');
  span.end();
  parentPort.postMessage({ before, after: sdk(), sampled: span.spanContext().traceFlags === 1, serviceName: span.resource?.attributes['service.name'] });
\`, { eval: true });
worker.once('message', (m) => { process.stdout.write(JSON.stringify({ ...m, mainSdk }) + '\\n'); });
`;

test('a worker under the preload loads no OpenTelemetry SDK module until a tracer is asked for, then makes sampled spans; the main thread loads it at start', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-sdk-'));
  const r = await runNode(['--import', 'spanfuse/register', '--input-type=module', '-e', SDK_APP], { SPANFUSE_OUTPUT_DIR: dir, OTEL_SERVICE_NAME: 'sdk-probe-svc', SPANFUSE_SPANS_ONE_IN: '1' });
  assert.equal(r.code, 0, r.stderr);
  const m = lastJsonLine<{ before: number; after: number; sampled: boolean; serviceName: unknown; mainSdk: number }>(r.stdout);
  // Not in the app's first request: a getTracer() there would wait for it.
  assert.ok(m.mainSdk > 0, 'the main thread had not loaded the SDK when the app started');
  assert.equal(m.before, 0, 'the preload loaded the SDK in the worker');
  assert.ok(m.after > 0, 'no SDK module after getTracer(): the span came from somewhere else');
  assert.equal(m.sampled, true, 'the worker span was not a sampled SDK span');
  assert.equal(m.serviceName, 'sdk-probe-svc');
  assert.ok(spansOf(dir).some((s) => s.name === 'worker-span'), 'worker-span not in spans.jsonl');
});

// Records, in worker threads only, every module URL the thread loads; given
// with --require ahead of the preload, which workers get after the app's own
// execArgv (workers/inject.ts). module.registerHooks: Node >= 22.15.
const MODULE_LOG_HOOK = `
const { registerHooks } = require('node:module');
const { isMainThread } = require('node:worker_threads');
const { appendFileSync } = require('node:fs');
if (!isMainThread) registerHooks({ load(url, context, next) { appendFileSync(process.env.MODULE_LOG, url + '\\n'); return next(url, context); } });
`;
// The worker's code is an ES module: it inherits --input-type=module.
const ALLOCATING_WORKER_APP = `
import { Worker } from 'node:worker_threads';
new Worker(\`
  import { parentPort } from 'node:worker_threads';
  const keep = [];
  for (let i = 0; i < 2000; i++) keep.push(new Array(512).fill(i));
  parentPort.postMessage(keep.length);
\`, { eval: true }).once('message', (n) => process.stdout.write(JSON.stringify({ n }) + '\\n'));
`;
const hasRegisterHooks = typeof (nodeModule as { registerHooks?: unknown }).registerHooks === 'function';

/** ALLOCATING_WORKER_APP under the preload (after `nodeArgs`): it must exit 0 with its result. */
async function runAllocatingApp(nodeArgs: string[], env: Record<string, string>): Promise<{ stderr: string; files: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-alloc-app-'));
  const args = [...nodeArgs, '--import', 'spanfuse/register', '--input-type=module', '-e', ALLOCATING_WORKER_APP];
  const r = await runNode(args, { SPANFUSE_OUTPUT_DIR: dir, ...env });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(lastJsonLine(r.stdout), { n: 2000 });
  return { stderr: r.stderr, files: readdirSync(dir) };
}

/** How many of `files` end with `suffix`. */
function countFiles(files: string[], suffix: string): number {
  return files.filter((f) => f.endsWith(suffix)).length;
}

test('a worker loads neither the runtime signals (main thread only), the heap stage nor the OTLP encoder at defaults; each loads when configured, and the worker writes its windows', async () => {
  const files = mkdtempSync(join(tmpdir(), 'spanfuse-modules-'));
  const hook = join(files, 'module-log.cjs');
  writeFileSync(hook, MODULE_LOG_HOOK);
  let runs = 0;
  const run = async (env: Record<string, string>): Promise<{ modules: string[]; files: string[] }> => {
    const log = join(files, `modules-${String(runs++)}.txt`);
    const { files: written } = await runAllocatingApp(hasRegisterHooks ? ['--require', hook] : [], { MODULE_LOG: log, ...env });
    const modules = existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter((l) => l !== '') : [];
    return { modules, files: written };
  };
  const loaded = (modules: string[], path: string): boolean => modules.some((u) => u.endsWith(`/dist/src/${path}`));
  const defaults = await run({});
  const heap = await run({ SPANFUSE_HEAP_ENABLED: 'true' });
  const otlp = await run({ SPANFUSE_FILE_FORMATS: 'pprof,otlp' });
  // One window from each thread (the main thread's wall window has an
  // off-CPU companion, *.offcpu.pb.gz, not counted by these suffixes).
  assert.equal(countFiles(defaults.files, '.heap.pb.gz'), 0);
  assert.equal(countFiles(defaults.files, '.otlp.pb'), 0);
  assert.equal(countFiles(heap.files, '.heap.pb.gz'), 2, `expected one heap profile from each thread: ${heap.files.join(' ')}`);
  assert.equal(countFiles(otlp.files, '.otlp.pb'), 2, `expected one OTLP file from each thread: ${otlp.files.join(' ')}`);
  if (!hasRegisterHooks) return;
  assert.ok(loaded(defaults.modules, 'spanfuse.js'), `the hook saw no preload module in the worker: ${defaults.modules.length} modules`);
  assert.ok(loaded(defaults.modules, 'runtime/thread-span-counters.js'));
  for (const [path, what] of [
    ['runtime/runtime-signals.js', 'the runtime signals'],
    ['heap/stage.js', 'the heap stage with the heap profile off'],
    ['profile/otlp/encode.js', 'the OTLP encoder with no OTLP output'],
    ['export/otlp-exporter.js', 'the OTLP exporter'],
    ['export/pyroscope-exporter.js', 'the Pyroscope exporter'],
  ] as const) {
    assert.equal(loaded(defaults.modules, path), false, `a worker loaded ${what} at defaults`);
  }
  assert.ok(loaded(heap.modules, 'heap/stage.js'), 'the heap stage was not loaded in the worker with the heap profile on');
  assert.ok(loaded(otlp.modules, 'profile/otlp/encode.js'), 'the OTLP encoder was not loaded in the worker with OTLP files on');
  assert.equal(loaded(heap.modules, 'runtime/runtime-signals.js'), false);
});

test('without require(esm) (--no-experimental-require-module) the app and its worker run: the main thread is profiled without runtime signals, the worker unprofiled, the heap profile is off and OTLP output refused, each with a message', async () => {
  const run = (env: Record<string, string>): Promise<{ stderr: string; files: string[] }> => runAllocatingApp(['--no-experimental-require-module'], env);
  const wall = (files: string[]): string[] => files.filter((f) => /-[0-9a-f]{32}\.pb\.gz$/.test(f));
  const defaults = await run({});
  assert.equal(defaults.stderr.match(/require\(esm\) is turned off/g)?.length, 1, defaults.stderr);
  // The main thread's window only: no worker window, no off-CPU profile (a runtime signal).
  assert.equal(wall(defaults.files).length, 1, defaults.files.join(' '));
  assert.equal(countFiles(defaults.files, '.offcpu.pb.gz'), 0, defaults.files.join(' '));
  const heap = await run({ SPANFUSE_HEAP_ENABLED: 'true' });
  assert.match(heap.stderr, /the heap profile is off/);
  assert.equal(wall(heap.files).length, 1, heap.files.join(' '));
  assert.equal(countFiles(heap.files, '.heap.pb.gz'), 0);
  const otlp = await run({ SPANFUSE_FILE_FORMATS: 'pprof,otlp' });
  assert.match(otlp.stderr, /OTLP output needs require\(esm\)/);
  assert.match(otlp.stderr, /profiling is off for this process/);
  assert.deepEqual(otlp.files, []);
});

test('when the main thread cannot start (a configuration error), a worker that inherits the preload stays off too: the error is printed once, not once per thread', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-off-'));
  const r = await runNode(['--import', 'spanfuse/register', fixture('worker-app')], { SPANFUSE_OUTPUT_DIR: dir, SPANFUSE_WINDOW_MS: 'abc' });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr.match(/invalid configuration/g)?.length, 1, r.stderr);
  assert.equal(r.stderr.match(/profiling is off for this process/g)?.length, 1, r.stderr);
  assert.deepEqual(readdirSync(dir), []);
});
