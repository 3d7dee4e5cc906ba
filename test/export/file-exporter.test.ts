import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Profile } from '../../src/core/pprof.js';
import { Diagnostics } from '../../src/core/diagnostics.js';
import { FileExporter, parseWindowFileName, windowFileName } from '../../src/export/index.js';
import { handWindow, newSpan, sampledWindow } from '../profile/fixtures.js';

const quiet = (): Diagnostics => new Diagnostics(() => undefined);

async function tempDir(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'spanfuse-file-'));
  t.after(() => rm(d, { recursive: true, force: true }));
  return d;
}

void test('file names sort by time and carry the profile id', () => {
  const id = 'ab'.repeat(16);
  const a = windowFileName(1_790_000_000_000_000_000n, id, 'wall');
  const b = windowFileName(1_790_000_000_123_000_000n, id, 'heap');
  assert.equal(a, `spanfuse-20260921T141320000Z-${id}.pb.gz`);
  assert.ok(a < b);
  assert.equal(parseWindowFileName(b)?.profileId, id);
  assert.equal(parseWindowFileName(windowFileName(1n, id, 'otlp'))?.profileId, id);
  assert.equal(parseWindowFileName('notes.txt'), undefined);
  for (const kind of ['wall', 'heap', 'offcpu', 'otlp'] as const) {
    assert.equal(parseWindowFileName(windowFileName(1n, id, kind))?.kind, kind);
  }
});

void test('writes a gzip pprof per window into a folder it creates', async (t) => {
  const dir = join(await tempDir(t), 'nested', 'out');
  const ex = new FileExporter({ dir, diagnostics: quiet() });
  const w = sampledWindow([newSpan('work')]);
  const outcome = await ex.export(w);
  assert.deepEqual(outcome, { kind: 'success' });
  const files = await readdir(dir);
  assert.deepEqual(files, [windowFileName(w.startUnixNs, w.profileId, 'wall')]);
  const bytes = await readFile(join(dir, files[0] ?? ''));
  const decoded = Profile.decode(gunzipSync(bytes));
  assert.equal(decoded.sample.length, w.wall.sample.length);
  const strings = decoded.stringTable.strings;
  assert.ok(strings.includes('span_id'));
  assert.ok(strings.includes('trace_id'));
  assert.equal((await stat(join(dir, files[0] ?? ''))).mode & 0o777, 0o600);
  await ex.shutdown(1000);
});

void test('heap and off-CPU profiles get their own files; otlp files when asked', async (t) => {
  const dir = await tempDir(t);
  const w = handWindow();
  w.heap = handWindow().wall;
  w.offCpu = handWindow().wall;
  const ex = new FileExporter({
    dir,
    formats: ['pprof', 'otlp'],
    encodeOtlp: () => new Uint8Array([1, 2, 3]),
    diagnostics: quiet(),
  });
  assert.equal((await ex.export(w)).kind, 'success');
  const files = (await readdir(dir)).sort();
  assert.deepEqual(files, [
    windowFileName(w.startUnixNs, w.profileId, 'heap'),
    windowFileName(w.startUnixNs, w.profileId, 'offcpu'),
    windowFileName(w.startUnixNs, w.profileId, 'otlp'),
    windowFileName(w.startUnixNs, w.profileId, 'wall'),
  ].sort());
  assert.deepEqual([...(await readFile(join(dir, windowFileName(w.startUnixNs, w.profileId, 'otlp'))))], [1, 2, 3]);
});

void test('retention keeps the newest files within the count limit, oldest deleted first', async (t) => {
  const dir = await tempDir(t);
  const ex = new FileExporter({ dir, maxFiles: 3, maxQueuedWindows: 8, diagnostics: quiet() });
  const windows = Array.from({ length: 6 }, (_, i) => handWindow(1_790_000_000_000_000_000n + BigInt(i) * 60_000_000_000n));
  const outcomes = await Promise.all(windows.map((w) => ex.export(w)));
  assert.ok(outcomes.every((o) => o.kind === 'success'));
  const files = (await readdir(dir)).sort();
  assert.deepEqual(files, windows.slice(3).map((w) => windowFileName(w.startUnixNs, w.profileId, 'wall')));
  assert.equal(ex.stats()['filesDeleted'], 3);
});

void test('retention by bytes; pinned windows survive until unpinned', async (t) => {
  const dir = await tempDir(t);
  const windows = Array.from({ length: 5 }, (_, i) => handWindow(1_790_000_000_000_000_000n + BigInt(i) * 60_000_000_000n));
  // Size of one file, to set a budget of about two files.
  const probe = new FileExporter({ dir: join(dir, 'probe'), diagnostics: quiet() });
  await probe.export(windows[0]!);
  const one = (await stat(join(dir, 'probe', (await readdir(join(dir, 'probe')))[0]!))).size;
  await rm(join(dir, 'probe'), { recursive: true });

  const ex = new FileExporter({ dir, maxBytes: one * 2 + one / 2, diagnostics: quiet() });
  ex.pin(windows[0]!.profileId);
  for (const w of windows) assert.equal((await ex.export(w)).kind, 'success');
  const names = (await readdir(dir)).sort();
  const ids = names.map((n) => parseWindowFileName(n)?.profileId);
  // Pinned oldest window stays; of the rest only the newest fits.
  assert.deepEqual(ids, [windows[0]!.profileId, windows[4]!.profileId]);
  ex.unpin(windows[0]!.profileId);
  const next = handWindow(1_790_000_000_000_000_000n + 10n * 60_000_000_000n);
  await ex.export(next);
  const after = (await readdir(dir)).sort().map((n) => parseWindowFileName(n)?.profileId);
  assert.deepEqual(after, [windows[4]!.profileId, next.profileId]);
});

void test('retention counts files left by an earlier run and ignores foreign files', async (t) => {
  const dir = await tempDir(t);
  const old = handWindow(1_700_000_000_000_000_000n);
  const first = new FileExporter({ dir, diagnostics: quiet() });
  await first.export(old);
  await first.shutdown(100);
  await writeFile(join(dir, 'README.txt'), 'not ours');
  const second = new FileExporter({ dir, maxFiles: 1, diagnostics: quiet() });
  const w = handWindow(1_790_000_000_000_000_000n);
  await second.export(w);
  assert.deepEqual((await readdir(dir)).sort(), ['README.txt', windowFileName(w.startUnixNs, w.profileId, 'wall')].sort());
});

void test('a folder that cannot be created gives a failure outcome, not a throw', async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'file'), 'x');
  const diagnostics = quiet();
  const ex = new FileExporter({ dir: join(dir, 'file', 'sub'), diagnostics });
  const outcome = await ex.export(handWindow());
  assert.equal(outcome.kind, 'failure');
  assert.equal(diagnostics.counters()['errors.export.file'], 1);
  assert.equal(ex.stats()['writeErrors'], 1);
});

void test('queue of windows is bounded: oldest dropped and counted', async (t) => {
  const dir = await tempDir(t);
  const ex = new FileExporter({ dir, maxQueuedWindows: 2, diagnostics: quiet() });
  const ws = Array.from({ length: 6 }, (_, i) => handWindow(1_790_000_000_000_000_000n + BigInt(i) * 1_000_000_000n));
  const outcomes = await Promise.all(ws.map((w) => ex.export(w)));
  // The first starts writing at once; of the five waiting, only the last two stay.
  assert.deepEqual(outcomes.map((o) => o.kind), ['success', 'failure', 'failure', 'failure', 'success', 'success']);
  assert.equal(ex.stats()['dropped'], 3);
  assert.equal((await readdir(dir)).length, 3);
});
