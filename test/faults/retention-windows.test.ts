// Retention deletes whole windows (wall + off-CPU files together), oldest
// first, and counts files: with SPANFUSE_FILE_MAX_FILES=3 and two files per
// window, the folder keeps only whole windows within 3 files, the newest
// always; the synchronous exit write applies retention too.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Diagnostics } from '../../src/core/diagnostics.js';
import { FileExporter, parseWindowFileName } from '../../src/export/index.js';
import { handWindow } from '../profile/fixtures.js';

function twoFileWindow(i: number): ReturnType<typeof handWindow> {
  const w = handWindow(1_790_000_000_000_000_000n + BigInt(i) * 60_000_000_000n);
  w.offCpu = handWindow().wall;
  return w;
}

function windowsOnDisk(dir: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const n of readdirSync(dir)) {
    const p = parseWindowFileName(n);
    if (p !== undefined) m.set(p.profileId, (m.get(p.profileId) ?? 0) + 1);
  }
  return m;
}

void test('maxFiles counts files and retention deletes whole windows, oldest first, never the newest', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-ret-'));
  const ex = new FileExporter({ dir, maxFiles: 3, diagnostics: new Diagnostics(() => undefined) });
  const ws = Array.from({ length: 5 }, (_, i) => twoFileWindow(i));
  for (const w of ws) assert.equal((await ex.export(w)).kind, 'success');
  // 2 files per window, at most 3 files: one whole window (the newest).
  assert.deepEqual([...windowsOnDisk(dir)], [[ws[4]!.profileId, 2]]);
  // The exit path writes and applies the same rule.
  const last = twoFileWindow(9);
  assert.equal(ex.writeSync(last), true);
  assert.deepEqual([...windowsOnDisk(dir)], [[last.profileId, 2]]);
  await ex.shutdown(100);
});

void test('a newest window larger than the limit is still kept whole', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-ret-'));
  const ex = new FileExporter({ dir, maxFiles: 1, diagnostics: new Diagnostics(() => undefined) });
  const ws = [twoFileWindow(0), twoFileWindow(1)];
  for (const w of ws) await ex.export(w);
  assert.deepEqual([...windowsOnDisk(dir)], [[ws[1]!.profileId, 2]]);
  await ex.shutdown(100);
});
