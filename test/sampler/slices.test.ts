import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSliced, runSync, staged, stepEvery, STEP_MAX_MS } from '../../src/core/slices.js';
import { selfTimeTotals } from '../../src/core/self-time.js';

/** Counts event-loop turns (one setImmediate per turn) until stopped. */
function turnCounter(): { readonly now: () => number; readonly stop: () => void } {
  let turns = 0;
  let ticking = true;
  const tick = (): void => {
    turns++;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  return { now: () => turns, stop: () => (ticking = false) };
}

/** Keep the thread busy for `ms`. */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

void test('sliced jobs share one queue: the oldest runs first, one budget per turn, errors reject only their job', async () => {
  const order: string[] = [];
  const turns = turnCounter();
  function* job(name: string, steps: number, fail = false): Generator<void, string, void> {
    for (let i = 1; i <= steps; i++) {
      order.push(`${name}${i}@${turns.now()}`);
      if (fail && i === 2) throw new Error(`${name} failed`);
      yield;
    }
    return name;
  }
  const a = runSliced(job('a', 3), 0);
  const b = runSliced(job('b', 3, true), 0);
  const c = runSliced(job('c', 2), 0);
  assert.equal(order.length, 0, 'nothing runs in the caller\u2019s turn');
  assert.equal(await a, 'a');
  await assert.rejects(b, /b failed/);
  assert.equal(await c, 'c');
  turns.stop();
  const names = order.map((o) => o.split('@')[0]);
  assert.deepEqual(names, ['a1', 'a2', 'a3', 'b1', 'b2', 'c1', 'c2']);
  // A 0 ms budget: one step per turn, so no two steps share a turn.
  const at = order.map((o) => Number(o.split('@')[1]));
  assert.equal(new Set(at).size, at.length, `steps shared a turn: ${order.join(' ')}`);
});

void test('a slice ends before a step that would likely overrun the budget: only its first step may', async () => {
  const turns = turnCounter();
  const at: number[] = [];
  // Steps of 6 ms against a 10 ms budget: without the guess from the
  // previous step, two would share a turn (a 12 ms slice).
  function* heavy(): Generator<void, void, void> {
    for (let i = 0; i < 4; i++) {
      at.push(turns.now());
      busy(6);
      yield;
    }
  }
  // Steps of ~0 ms: many share a turn.
  const light: number[] = [];
  function* many(): Generator<void, void, void> {
    for (let i = 0; i < 50; i++) {
      light.push(turns.now());
      yield;
    }
  }
  await runSliced(heavy(), 10);
  await runSliced(many(), 10);
  turns.stop();
  assert.equal(new Set(at).size, at.length, `heavy steps shared a turn: ${at.join(' ')}`);
  assert.ok(new Set(light).size < light.length / 2, `light steps: ${light.join(' ')}`);
  // The longest slice is on record (each heavy step took at least 6 ms).
  assert.ok(selfTimeTotals().longestMs.sliced >= 6, JSON.stringify(selfTimeTotals().longestMs));
});

void test('staged: each stage gets its own time inside slices, nested stages apart; runSync counts nothing; an early close reaches the inner steps', async () => {
  function* work(ms: number, steps: number): Generator<void, number, void> {
    for (let i = 0; i < steps; i++) {
      busy(ms);
      yield;
    }
    return steps;
  }
  function* outer(): Generator<void, number, void> {
    busy(2);
    yield;
    const inner = yield* staged('scrub', work(10, 3));
    busy(2);
    return inner;
  }
  const before = selfTimeTotals().stagesMs;
  assert.equal(await runSliced(staged('encode', outer()), 0), 3);
  const after = selfTimeTotals().stagesMs;
  const scrub = (after.scrub ?? 0) - (before.scrub ?? 0);
  const encode = (after.encode ?? 0) - (before.encode ?? 0);
  // Wall clock: at least the busy time; preemption can only add.
  assert.ok(scrub >= 30, `scrub ${scrub} ms`);
  assert.ok(encode >= 4, `encode ${encode} ms`);
  // Counted in the outer stage too, encode would be at least 34 ms.
  assert.ok(encode < 30, `the nested stage's time is not also the outer one's: encode ${encode}, scrub ${scrub}`);
  // The longest single step of each: scrub's steps took 10 ms each; encode's
  // own steps 2 ms (its step around the nested stage is the nested stage's).
  const longest = selfTimeTotals().stagesLongestStepMs;
  assert.ok((longest.scrub ?? 0) >= 10, JSON.stringify(longest));
  assert.ok((longest.encode ?? 0) >= 2 && (longest.encode ?? 0) < 10, JSON.stringify(longest));

  // The exit path (runSync) is not sliced work.
  const sync0 = selfTimeTotals().stagesMs.tail ?? 0;
  assert.equal(runSync(staged('tail', work(2, 2))), 2);
  assert.equal(selfTimeTotals().stagesMs.tail ?? 0, sync0);

  let cleaned = false;
  function* withCleanup(): Generator<void, void, void> {
    try {
      yield;
      yield;
    } finally {
      cleaned = true;
    }
  }
  const s = staged('assemble', withCleanup());
  s.next();
  s.return(undefined);
  assert.ok(cleaned, 'closing the staged steps closed the inner ones');
});

void test('stepEvery: a step ends after `every` entries, or sooner once it has run STEP_MAX_MS', () => {
  // Fast entries: exactly every 64th call is due.
  const fast = stepEvery(64, 60_000);
  const dueAt: number[] = [];
  for (let i = 1; i <= 200; i++) if (fast()) dueAt.push(i);
  assert.deepEqual(dueAt, [64, 128, 192]);
  // Slow entries (each longer than a quarter of the limit): the step ends
  // within a clock read (every 8th entry at 64) of reaching the limit, long
  // before 64 entries.
  const slow = stepEvery(64);
  let entries = 0;
  const start = performance.now();
  while (!slow()) {
    entries++;
    busy(STEP_MAX_MS / 4);
  }
  const ms = performance.now() - start;
  assert.ok(entries < 64, `${entries} entries in the step`);
  assert.ok(ms >= STEP_MAX_MS, `the step ran ${ms} ms`);
  // Steps of 8 (a clock read per entry) end at the first entry past the
  // limit: after the second here (the first if the machine stalled).
  const few = stepEvery(8);
  entries = 0;
  while (!few()) {
    entries++;
    busy(STEP_MAX_MS * 0.6);
  }
  assert.ok(entries >= 1 && entries <= 2, `${entries} entries in the step`);
  // Unbounded steps (the synchronous path) read the clock every 8th entry,
  // not at every one: with no time allowed, the first due entry is the 8th.
  const unbounded = stepEvery(Infinity, 0);
  let calls = 1;
  while (!unbounded()) calls++;
  assert.equal(calls, 8);
});
