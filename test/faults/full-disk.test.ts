// A small filesystem that fills up (tmpfs of 1 MB): spans.jsonl only ever
// holds whole lines, retention deletes the oldest windows to make room for
// new ones (one warning), and the newest windows are on disk at the end.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { checkWindows, faultFixture, spanLines, startNode, tmp } from './helpers.js';

function mountTmpfs(dir: string): string | undefined {
  if (process.platform !== 'linux') return 'tmpfs needs Linux';
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { encoding: 'utf8' });
  return r.status === 0 ? undefined : `cannot mount a tmpfs here (${(r.stderr || r.error?.message || '').trim()})`;
}

void test('a full 1 MB disk leaves whole span lines (which give way first) and the newest windows', async (t) => {
  const dir = tmp('spanfuse-fulldisk-');
  const skip = mountTmpfs(dir);
  if (skip !== undefined) {
    rmSync(dir, { recursive: true, force: true });
    t.skip(skip);
    return;
  }
  try {
    const r = await startNode(['--import', 'spanfuse/register', faultFixture('disk-app')], {
      SPANFUSE_OUTPUT_DIR: dir,
      SPANFUSE_WINDOW_MS: '100',
      SPANFUSE_SAMPLING_INTERVAL_US: '1000',
      FAULT_WORK_MS: '5000',
      FAULT_EXTRA_MS: '15000',
    }).done;
    assert.equal(r.signal, null, r.stderr);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}') as { ids: string[]; file: Record<string, number>; closedBeforeStart: number; missed: number };
    // Span lines: every line parses, the file ends on a line boundary.
    const spans = spanLines(dir);
    assert.ok(spans.lines > 100, `only ${spans.lines} span lines`);
    // The disk did fill up and retention made room by deleting old windows.
    assert.ok((out.file['filesDeletedForSpace'] ?? 0) > 0, `no window deleted for space: ${JSON.stringify(out.file)}`);
    assert.equal(r.stderr.match(/is full; deleting the oldest profile windows/g)?.length, 1, r.stderr);
    // What is on disk is whole, and it is the newest windows.
    const files = checkWindows(dir);
    assert.deepEqual(files.broken, []);
    const onDisk = [...files.byId.keys()];
    assert.ok(onDisk.length > 0, 'no window left on disk');
    const all = onDisk.map((id) => out.ids.indexOf(id));
    // Only windows that closed before the app's code ran, or between two of
    // its polls, may be unknown to it.
    const unseen = all.filter((p) => p < 0).length;
    assert.ok(
      unseen <= out.closedBeforeStart + out.missed,
      `${unseen} windows on disk that the app never saw (${out.closedBeforeStart} closed before it started, ${out.missed} between polls)`,
    );
    const positions = all.filter((p) => p >= 0).sort((a, b) => a - b);
    assert.ok(positions.length > 0, 'none of the windows the app saw is on disk');
    const newest = positions.at(-1) ?? -1;
    assert.ok(newest >= out.ids.length - 3, `newest window on disk is #${newest + 1} of ${out.ids.length}`);
    assert.ok((positions[0] ?? 0) > 0, 'the oldest window was kept although windows were deleted for space');
  } finally {
    spawnSync('umount', [dir]);
    rmSync(dir, { recursive: true, force: true });
  }
});
