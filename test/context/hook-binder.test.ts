/**
 * The async_hooks binder (no AsyncContextFrame): every callback's `before`
 * puts its span in the sampler's slot. By default the slot keeps it after
 * the callback (no `after` hook); with `clearBetweenCallbacks` it is emptied
 * in `after`. Both run against @datadog/pprof's real wall profiler, reading
 * its slot back with `time.getContext()`.
 */
import assert from 'node:assert/strict';
import { AsyncLocalStorage, createHook, executionAsyncId } from 'node:async_hooks';
import { test } from 'node:test';
import { time } from '@datadog/pprof';
import { HookBinder } from '../../src/context/index.js';

const store = new AsyncLocalStorage<object>();

/** What the slot held in the callback itself and in a later hook's `after` of the same callback. */
async function slotAroundCallback(clearBetweenCallbacks: boolean): Promise<{ inside: unknown; after: unknown; outside: unknown }> {
  const binder = new HookBinder(() => store.getStore(), { clearBetweenCallbacks });
  const span = { name: 'span-a' };
  let target = -1;
  let after: unknown = 'not seen';
  // Hooks run in the order they were enabled: this one's `after` comes after the binder's.
  const observer = createHook({
    after(asyncId) {
      if (asyncId === target) after = time.getContext();
    },
  });
  time.start({ intervalMicros: 10_000, withContexts: true, useCPED: false, collectCpuTime: false, lineNumbers: false });
  try {
    binder.enable();
    observer.enable();
    const inside = await new Promise<unknown>((resolve) => {
      store.run(span, () => {
        setImmediate(() => {
          target = executionAsyncId();
          resolve(time.getContext());
        });
      });
    });
    await new Promise((resolve) => setImmediate(resolve));
    // A callback outside any span sets the slot back to nothing.
    const outside = await new Promise<unknown>((resolve) => setTimeout(() => resolve(time.getContext()), 1));
    return { inside, after, outside };
  } finally {
    observer.disable();
    binder.disable();
    time.stop(false);
  }
}

test('by default the slot keeps the last callback\'s span until the next callback sets its own', async () => {
  const r = await slotAroundCallback(false);
  assert.deepEqual(r.inside, { name: 'span-a' });
  assert.deepEqual(r.after, { name: 'span-a' }, 'no after hook: the slot is not cleared');
  assert.equal(r.outside, undefined);
});

test('with clearBetweenCallbacks the slot is emptied after every callback', async () => {
  const r = await slotAroundCallback(true);
  assert.deepEqual(r.inside, { name: 'span-a' });
  assert.equal(r.after, undefined);
  assert.equal(r.outside, undefined);
});
