// The debug endpoint in a real profiled process (the tail-burn fixture with
// SPANFUSE_DEBUG_PORT=0 and a token, OpenTelemetry's HTTP instrumentation
// registered): token checks, the tail span page and a span's flamegraph,
// /debug/pprof/profile decoded by pprof-format and read by `go tool pprof`,
// no span for the endpoint's own requests, loopback only by default.
// (go tool pprof gets -timeout 120: its default, 1.5 x seconds, is too short
// for a loaded test machine.)
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { Profile } from '../../src/core/pprof.js';
import { resolveConfig } from '../../src/config/index.js';
import { ConfigError } from '../../src/core/index.js';
import { ROOT } from '../support/child.js';
import { TAIL_APP } from '../cli-flame/helpers.js';

const TOKEN = 'test-token-0123456789abcdef';
const hasGo = spawnSync('go', ['version']).status === 0;
let child: ChildProcess | undefined;
let base = '';
let dir = '';
let exited: Promise<number | null> = Promise.resolve(null);
let childErr = '';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function get(path: string, headers: Record<string, string> = {}, url = base): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error('timeout')));
    req.end();
  });
}
const auth = { authorization: `Bearer ${TOKEN}` };

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'spanfuse-debug-'));
  const c = spawn(process.execPath, [TAIL_APP], {
    cwd: ROOT,
    env: {
      ...process.env,
      SPANFUSE_OUTPUT_DIR: dir,
      SPANFUSE_SAMPLING_INTERVAL_US: '1000',
      SPANFUSE_WINDOW_MS: '1000',
      SPANFUSE_TAIL_THRESHOLD_MS: '25',
      SPANFUSE_HEAP_ENABLED: 'false',
      SPANFUSE_DEBUG_PORT: '0',
      SPANFUSE_DEBUG_TOKEN: TOKEN,
      FIXTURE_HOLD_MS: '40000',
      FIXTURE_INSTRUMENT_HTTP: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child = c;
  c.stderr.setEncoding('utf8').on('data', (d: string) => (childErr += d));
  exited = new Promise((r) => c.on('exit', (code) => r(code)));
  base = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no DEBUG_URL from the fixture: ${out} ${childErr}`)), 60_000);
    c.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /DEBUG_URL (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
  });
  assert.notEqual(base, 'none', childErr);
  // Let a window with tail spans reach the endpoint's ring.
  for (let i = 0; i < 150; i++) {
    const r = await get('/debug/tails', auth);
    if (r.body.toString().includes('/debug/flame?span=')) break;
    await new Promise((r2) => setTimeout(r2, 200));
  }
});

after(async () => {
  if (child !== undefined && child.exitCode === null) child.kill('SIGTERM');
  await exited;
});

test('binds 127.0.0.1 by default and answers nothing without the right token', async () => {
  assert.match(base, /^http:\/\/127\.0\.0\.1:\d+$/);
  for (const headers of [{}, { authorization: 'Bearer wrong-token' }, { authorization: `Basic ${TOKEN}` }]) {
    const r = await get('/debug/tails', headers);
    assert.equal(r.status, 401, JSON.stringify(headers));
    assert.match(String(r.headers['www-authenticate']), /^Bearer/);
    assert.doesNotMatch(r.body.toString(), /GET \/checkout/);
  }
  assert.equal((await get('/debug/pprof/profile?seconds=1&token=nope')).status, 401);
  // A loopback endpoint only answers loopback host names (DNS rebinding).
  assert.equal((await get('/debug/tails', { ...auth, host: 'attacker.example' })).status, 403);
  // Not reachable through this machine's other interfaces.
  const port = Number(new URL(base).port);
  const external = Object.values(networkInterfaces())
    .flat()
    .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal);
  if (external !== undefined) {
    await assert.rejects(get('/debug/tails', auth, `http://${external.address}:${port}`), /ECONNREFUSED/);
  }
});

test('the tail span page links to each span flamegraph, which draws the burn function', async () => {
  const page = await get('/debug/tails', auth);
  assert.equal(page.status, 200);
  const html = page.body.toString();
  assert.match(html, /GET \/checkout \(SERVER\)/);
  const links = [...html.matchAll(/href="(\/debug\/flame\?span=[0-9a-f]{16})"/g)].map((m) => m[1]!).slice(0, 20);
  assert.ok(links.length > 0, html.slice(0, 2000));
  // Every linked page draws its span; on a loaded machine some spans cross
  // the budget without the burn, so the burn must show on at least one.
  let burnSeen = false;
  for (const link of links) {
    const flame = await get(link, auth);
    assert.equal(flame.status, 200, flame.body.toString());
    const doc = JSON.parse(/id="flame-data">([\s\S]*?)<\/script>/.exec(flame.body.toString())![1]!) as { names: string[]; title: string };
    assert.match(doc.title, new RegExp(`^span ${link.slice(-16)} \\(`));
    if (doc.names.includes('tail_only_burn')) burnSeen = true;
  }
  assert.ok(burnSeen, 'a tail span page shows tail_only_burn');
  const diff = await get(`/debug/diff?operation=${encodeURIComponent('GET /checkout (SERVER)')}`, auth);
  assert.equal(diff.status, 200, diff.body.toString());
  assert.match(diff.body.toString(), /only-tail/);
  const unknown = await get('/debug/flame?span=ffffffffffffffff', auth);
  assert.equal(unknown.status, 404);
  assert.match(unknown.body.toString(), /no samples of span ffffffffffffffff in the \d+ windows in memory/);
  assert.equal((await get('/debug/pprof/profile?seconds=0', auth)).status, 400);
});

test('/debug/pprof/profile?seconds=1 is a gzip pprof of those seconds with span labels', async () => {
  const before = BigInt(Date.now()) * 1_000_000n;
  const r = await get('/debug/pprof/profile?seconds=1', auth);
  const afterNs = BigInt(Date.now()) * 1_000_000n;
  assert.equal(r.status, 200, r.body.toString());
  const p = Profile.decode(gunzipSync(r.body));
  const str = (i: number | bigint): string => p.stringTable.strings[Number(i)] ?? '';
  assert.deepEqual(p.sampleType.map((t) => `${str(t.type)}/${str(t.unit)}`).slice(0, 2), ['sample/count', 'wall/nanoseconds']);
  assert.ok(p.sample.length > 0);
  // The capture covers the seconds asked for, and lies inside the request.
  assert.ok(BigInt(p.durationNanos) >= 1_000_000_000n - 5_000_000n, `duration ${p.durationNanos}`);
  assert.ok(BigInt(p.timeNanos) >= before && BigInt(p.timeNanos) + BigInt(p.durationNanos) <= afterNs, 'capture inside the request');
  const tsKey = p.stringTable.strings.indexOf('end_timestamp_ns');
  for (const s of p.sample) {
    const ts = s.label.find((l) => Number(l.key) === tsKey);
    assert.ok(ts !== undefined && BigInt(ts.num) >= before && BigInt(ts.num) <= afterNs, 'every sample lies inside the capture');
  }
  const spanKey = p.stringTable.strings.indexOf('span_id');
  assert.ok(spanKey > 0 && p.sample.some((s) => s.label.some((l) => Number(l.key) === spanKey)), 'samples carry span labels');
});

test('go tool pprof fetches and reads the endpoint profile', async (t) => {
  if (!hasGo) {
    assert.notEqual(process.env.SPANFUSE_REQUIRE_GO, '1', 'go is required here (SPANFUSE_REQUIRE_GO=1) but not installed');
    t.skip('go is not installed (apt-get install golang-go)');
    return;
  }
  const r = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const g = spawn('go', ['tool', 'pprof', '-raw', '-timeout', '120', `${base}/debug/pprof/profile?seconds=1&token=${TOKEN}`], { env: { ...process.env, HOME: dir } });
    let stdout = '';
    let stderr = '';
    g.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    g.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    g.on('close', (status) => resolve({ status, stdout, stderr }));
  });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /sample\/count wall\/nanoseconds/);
  assert.match(r.stdout, /span_id:\[[0-9a-f]{16}\]/);
  assert.match(r.stdout, /spanfuse debug capture of 1 s/);
});

test('the endpoint never traces itself: its requests leave no span while the app is traced', async () => {
  // SIGTERM ends the fixture's hold; it shuts spanfuse down and flushes its spans.
  child?.kill('SIGTERM');
  assert.equal(await exited, 0, childErr);
  const spans: { name: string; kind: number; attributes: Record<string, unknown> }[] = readFileSync(join(dir, 'spans.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const http = spans.filter((s) => Object.keys(s.attributes).some((k) => k.startsWith('http.') || k.startsWith('url.')) && s.name !== 'GET /checkout');
  assert.ok(http.some((s) => JSON.stringify(s.attributes).includes('/app-control')), `control: the app's own request is traced (${http.length} http spans)`);
  assert.ok(!http.some((s) => JSON.stringify(s.attributes).includes('/debug')), 'no span for /debug requests');
});

test('a non-loopback interface is refused unless explicitly allowed with a token', () => {
  const problems = (opts: Parameters<typeof resolveConfig>[0], env: Record<string, string> = {}): string[] => {
    try {
      resolveConfig(opts, env);
      return [];
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      return err.problems.map((p) => `${p.field}: ${p.message}`);
    }
  };
  assert.equal(resolveConfig({}, {}).debug.enabled, false, 'off by default');
  const on = resolveConfig({}, { SPANFUSE_DEBUG_PORT: '0' }).debug;
  assert.deepEqual({ enabled: on.enabled, host: on.host, port: on.port }, { enabled: true, host: '127.0.0.1', port: 0 });
  assert.match(problems({ debug: { port: 0, host: '0.0.0.0' } }).join('\n'), /debug\.host: 0\.0\.0\.0 is not a loopback address.*SPANFUSE_DEBUG_ALLOW_REMOTE/);
  assert.match(problems({}, { SPANFUSE_DEBUG_PORT: '6060', SPANFUSE_DEBUG_HOST: '10.0.0.5' }).join('\n'), /debug\.host: 10\.0\.0\.5 is not a loopback/);
  assert.match(problems({ debug: { port: 0, host: '0.0.0.0', allowRemote: true } }).join('\n'), /debug\.token: .*at least 16 characters/);
  assert.deepEqual(problems({ debug: { port: 0, host: '0.0.0.0', allowRemote: true, token: TOKEN } }), []);
  assert.match(problems({}, { SPANFUSE_DEBUG_PORT: '70000' }).join('\n'), /SPANFUSE_DEBUG_PORT: expected a whole number from 0 to 65535/);
});
