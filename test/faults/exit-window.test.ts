// A window that has just closed (being scrubbed, encoded or queued for the
// file exporter) must still be written when the process exits or crashes a
// few milliseconds later: the synchronous exit path writes it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkWindows, faultFixture, spanLines, startNode, tmp } from './helpers.js';

const cases = [2, 10, 30].flatMap((delayMs) => (['exit', 'throw'] as const).map((mode) => ({ delayMs, mode })));

for (const { delayMs, mode } of cases) {
  void test(`${mode === 'exit' ? 'process.exit(0)' : 'an uncaught throw'} ${delayMs} ms after a window boundary keeps every window`, async () => {
    const dir = tmp();
    const run = startNode(['--import', 'spanfuse/register', faultFixture('window-exit-app')], {
      SPANFUSE_OUTPUT_DIR: dir,
      SPANFUSE_WINDOW_MS: '1000',
      SPANFUSE_SAMPLING_INTERVAL_US: '1000',
      FAULT_DELAY_MS: String(delayMs),
      FAULT_MODE: mode,
    });
    const r = await run.done;
    assert.equal(r.signal, null, r.stderr);
    assert.equal(r.code, mode === 'exit' ? 0 : 1, r.stderr);
    if (mode === 'throw') assert.match(r.stderr, /fault: uncaught after a window boundary/);
    const { ids } = JSON.parse(r.stdout.trim().split('\n')[0] ?? '{}') as { ids: string[] };
    assert.equal(ids.length, 3, r.stdout);
    const files = checkWindows(dir);
    assert.deepEqual(files.broken, []);
    for (const [i, id] of ids.entries()) {
      const names = files.byId.get(id) ?? [];
      assert.ok(
        names.some((n) => n.endsWith(`${id}.pb.gz`)),
        `window ${i + 1} of 3 (${id}) has no pprof file; on disk: ${JSON.stringify([...files.byId.keys()])}`,
      );
    }
    assert.ok(spanLines(dir).lines > 0, 'no span written');
  });
}
