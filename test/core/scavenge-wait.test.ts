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
    const waited = w.wait(60_000).then((why) => {
      resolvedAt = performance.now();
      return why;
    });
    await churnUntil(() => resolvedAt > 0, 30_000);
    assert.equal(await waited, 'scavenge');
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
  // A scavenge may still come in an idle 50 ms (the test runner allocates):
  // then the wait says so, and is tried again.
  let limited = 0;
  for (let i = 0; i < 5 && limited === 0; i++) {
    const t0 = performance.now();
    const why = await w.wait(50);
    const took = performance.now() - t0;
    if (why === 'limit') {
      limited++;
      assert.ok(took >= 45, `the limit came after ${took} ms`);
    } else assert.equal(why, 'scavenge');
  }
  assert.equal(limited, 1, 'five waits of 50 ms all ended by a scavenge');

  let released = false;
  for (let i = 0; i < 5 && !released; i++) {
    let done = false;
    const waited = w.wait(60_000).then((why) => {
      done = true;
      return why;
    });
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (done) {
      assert.equal(await waited, 'scavenge');
      continue;
    }
    w.release();
    assert.equal(await waited, 'released');
    released = true;
  }
  assert.ok(released, 'five waits all ended by a scavenge within one turn');
  // Nothing to wait for: at once.
  assert.equal(await w.wait(0), 'released');
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
