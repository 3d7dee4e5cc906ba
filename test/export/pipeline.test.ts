import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Diagnostics } from '../../src/core/diagnostics.js';
import type { WindowProfile } from '../../src/core/window.js';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { ExportPipeline, FileExporter, windowFileName } from '../../src/export/index.js';
import { Scrubber } from '../../src/profile/index.js';
import type { ExportOutcome, ProfileExporter, WindowScrubber } from '../../src/export/index.js';
import { handWindow } from '../profile/fixtures.js';

/** In-memory exporter: records what it got, can be told to fail or stall. */
class MemoryExporter implements ProfileExporter {
  readonly got: WindowProfile[] = [];
  shutdowns = 0;
  constructor(
    readonly name: string,
    private readonly behave: (w: WindowProfile) => Promise<ExportOutcome> = () => Promise.resolve({ kind: 'success' }),
  ) {}
  export(w: WindowProfile): Promise<ExportOutcome> {
    this.got.push(w);
    return this.behave(w);
  }
  shutdown(): Promise<void> {
    this.shutdowns++;
    return Promise.resolve();
  }
}

void test('submit is synchronous; windows reach every exporter after flush', async () => {
  const a = new MemoryExporter('a');
  const b = new MemoryExporter('b');
  const p = new ExportPipeline({ exporters: [a, b], diagnostics: new Diagnostics(() => undefined) });
  const w1 = handWindow();
  const w2 = handWindow();
  p.submit(w1);
  p.submit(w2);
  assert.equal(a.got.length, 0, 'nothing exported inside submit');
  await p.flush();
  assert.deepEqual(a.got, [w1, w2]);
  assert.deepEqual(b.got, [w1, w2]);
  const s = p.stats();
  assert.equal(s.submitted, 2);
  assert.equal(s.exporters['a']?.succeeded, 2);
  assert.equal(s.exporters['b']?.inFlight, 0);
});

void test('a throwing or failing exporter does not affect the others', async () => {
  const good = new MemoryExporter('good');
  const thrower = new MemoryExporter('thrower', () => {
    throw new Error('boom');
  });
  const failing = new MemoryExporter('failing', () => Promise.resolve({ kind: 'failure', reason: 'nope' }));
  const warnings: string[] = [];
  const diagnostics = new Diagnostics((m) => warnings.push(m));
  const p = new ExportPipeline({ exporters: [thrower, failing, good], diagnostics });
  p.submit(handWindow());
  p.submit(handWindow());
  await p.flush();
  assert.equal(good.got.length, 2);
  const s = p.stats();
  assert.equal(s.exporters['thrower']?.failed, 2);
  assert.equal(s.exporters['failing']?.failed, 2);
  assert.equal(s.exporters['good']?.succeeded, 2);
  assert.equal(diagnostics.counters()['export.thrower.failed'], 2);
  assert.equal(warnings.filter((w) => w.includes('thrower')).length, 1, 'warned once');
});

void test('the pending backlog is bounded and drops the oldest', async () => {
  const a = new MemoryExporter('a');
  const p = new ExportPipeline({ exporters: [a], diagnostics: new Diagnostics(() => undefined), maxPendingWindows: 2 });
  const ws = [handWindow(), handWindow(), handWindow(), handWindow()];
  for (const w of ws) p.submit(w);
  await p.flush();
  assert.deepEqual(a.got, ws.slice(2));
  assert.equal(p.stats().droppedPending, 2);
});

void test('the scrubber runs once per window before every exporter; a failing scrub exports nothing', async () => {
  let calls = 0;
  const scrubber: WindowScrubber = {
    scrub(w) {
      calls++;
      if (w.seq === 99) throw new Error('bad window');
      return { ...w, attributes: { ...w.attributes, scrubbed: true } };
    },
    stats: () => ({ redactions: calls }),
  };
  const a = new MemoryExporter('a');
  const b = new MemoryExporter('b');
  const p = new ExportPipeline({ exporters: [a, b], scrubber, diagnostics: new Diagnostics(() => undefined) });
  p.submit(handWindow());
  p.submit({ ...handWindow(), seq: 99 });
  await p.flush();
  assert.equal(calls, 2);
  assert.equal(a.got.length, 1);
  assert.equal(a.got[0]?.attributes['scrubbed'], true);
  assert.equal(b.got[0], a.got[0], 'same scrubbed object for every exporter');
  assert.equal(p.stats().scrubFailures, 1);
  assert.deepEqual(p.stats().scrub, { redactions: 2 });
});

void test('shutdown is idempotent, respects its deadline with a stalled exporter, refuses later submits', async (t) => {
  const stalled = new MemoryExporter('stalled', () => new Promise<ExportOutcome>(() => undefined));
  const a = new MemoryExporter('a');
  const p = new ExportPipeline({ exporters: [stalled, a], diagnostics: new Diagnostics(() => undefined) });
  // The pipeline's deadline timer is unref'd, as in a host; keep this test's loop alive.
  const keepAlive = setInterval(() => undefined, 1000);
  t.after(() => clearInterval(keepAlive));
  p.submit(handWindow());
  const s1 = p.shutdown(50);
  const s2 = p.shutdown(50);
  assert.equal(s1, s2);
  await s1;
  assert.equal(a.got.length, 1);
  assert.equal(stalled.shutdowns, 1);
  assert.equal(a.shutdowns, 1);
  p.submit(handWindow());
  assert.equal(p.stats().refusedAfterShutdown, 1);
  assert.equal(a.got.length, 1);
});

void test('exitSync scrubs and writes pending and last windows synchronously through exporters that can', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'spanfuse-exit-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = new FileExporter({ dir, diagnostics: new Diagnostics(() => undefined) });
  const network = new MemoryExporter('network');
  const scrubber = new Scrubber({ denyKeys: [], allowKeys: [], rules: [], appRoot: '/srv/app', userNames: [] });
  const p = new ExportPipeline({ exporters: [file, network], scrubber, diagnostics: new Diagnostics(() => undefined) });
  const pending = handWindow(1_790_000_000_000_000_000n);
  const last = handWindow(1_790_000_060_000_000_000n);
  p.submit(pending);
  p.exitSync(last);
  // Written before any event-loop turn.
  const names = (await readdir(dir)).sort();
  assert.deepEqual(names, [windowFileName(pending.startUnixNs, pending.profileId, 'wall'), windowFileName(last.startUnixNs, last.profileId, 'wall')]);
  const text = gunzipSync(await readFile(join(dir, names[0]!))).toString('latin1');
  assert.ok(text.includes('routes.js') && !text.includes('/srv/app/'), 'scrubbed (paths relative to the app root)');
  assert.equal(network.got.length, 0);
  const s = p.stats();
  assert.equal(s.exporters['file']?.succeeded, 2);
  assert.equal(s.exporters['network']?.failed, 2);
  p.submit(handWindow());
  assert.equal(p.stats().refusedAfterShutdown, 1);
});

void test('pin/unpin reach the exporters that keep data', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'spanfuse-pin-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = new FileExporter({ dir, diagnostics: new Diagnostics(() => undefined) });
  const p = new ExportPipeline({ exporters: [new MemoryExporter('mem'), file], diagnostics: new Diagnostics(() => undefined) });
  p.pin('ab'.repeat(16));
  assert.ok(file.isPinned('ab'.repeat(16)));
  p.unpin('ab'.repeat(16));
  assert.ok(!file.isPinned('ab'.repeat(16)));
});
