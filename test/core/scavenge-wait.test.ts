import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { ScavengeWait } from '../../src/core/scavenge-wait.js';

/** Allocates short-lived garbage on later turns until `done()`, so scavenges happen. */
async function churnUntil(done: () => boolean, maxMs: number): Promise<void> {
  const end = Date.now() + maxMs;
  let sink = 0;
  while (!done() && Date.now() < end) {
    for (let i = 0; i < 20_000; i++) sink += [i, { i }].length;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  assert.ok(sink > 0);
}

test('ScavengeWait: resolves after the next scavenge, long before its time limit', async () => {
  const scavenges: number[] = [];
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if ((e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) scavenges.push(performance.now());
    }
  });
  obs.observe({ entryTypes: ['gc'] });
  try {
    const w = new ScavengeWait();
    const started = performance.now();
    let resolvedAt = 0;
    const waited = w.wait(60_000).then(() => {
      resolvedAt = performance.now();
    });
    await churnUntil(() => resolvedAt > 0, 30_000);
    await waited;
    assert.ok(resolvedAt - started < 30_000, 'not the time limit');
    const first = scavenges.find((t) => t >= started);
    assert.ok(first !== undefined, 'a scavenge happened while waiting');
    assert.ok(resolvedAt >= first, 'resolved after that scavenge');
  } finally {
    obs.disconnect();
  }
});

test('ScavengeWait: the time limit ends a wait when no collection comes; release() ends it at once', async () => {
  // The wait's own timer is unref'd (next test): keep the loop alive here.
  const keepAlive = setTimeout(() => undefined, 10_000);
  const w = new ScavengeWait();
  const t0 = performance.now();
  await w.wait(50);
  assert.ok(performance.now() - t0 >= 45, 'waited for the limit');

  let done = false;
  const waited = w.wait(60_000).then(() => {
    done = true;
  });
  await new Promise<void>((resolve) => setImmediate(resolve));
  assert.equal(done, false);
  w.release();
  await waited;
  assert.equal(done, true);
  // Nothing to wait for: at once.
  await w.wait(0);
  clearTimeout(keepAlive);
});

test('ScavengeWait: its timer does not keep the process alive', async () => {
  const { spawnSync } = await import('node:child_process');
  const url = new URL('../../src/core/scavenge-wait.js', import.meta.url).href;
  const t0 = Date.now();
  const r = spawnSync(
    process.execPath,
    ['--input-type=module', '-e', `const { ScavengeWait } = await import(${JSON.stringify(url)}); void new ScavengeWait().wait(30000); console.log('ok');`],
    { encoding: 'utf8', timeout: 20_000 },
  );
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'ok');
  assert.ok(Date.now() - t0 < 15_000, 'exited without waiting 30 s');
});
