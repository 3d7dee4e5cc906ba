/**
 * Does a value entered with @datadog/pprof's `time.runWithContext` outlive
 * its frame through young-generation GCs? Enters N frames, each with a
 * ~3 KB object graph, synchronously (every frame is gone when the loop
 * ends), then runs three minor GCs and reports how much the old space grew
 * (what the scavenger kept and promoted), then a full GC.
 *
 *   node --expose-gc dist/bench/gc/holder-survival.js pprof|als|keep [N]
 *
 * `als` enters the same values with a plain AsyncLocalStorage (the
 * comparison); `keep` holds every value in an array (shows the measure
 * works). Node >= 24 (AsyncContextFrame) for `pprof`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { time } from '@datadog/pprof';

type Gc = (opts?: { type: 'minor' | 'major' }) => void;
const gc = (globalThis as { gc?: Gc }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
const mode = process.argv[2] ?? 'pprof';
const n = Number(process.argv[3] ?? 20_000);

const oldSpaceMb = (): number =>
  (getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')?.space_used_size ?? 0) / 2 ** 20;
const payload = (): object => ({ items: Array.from({ length: 50 }, (_, i) => ({ i })) });

time.start({ intervalMicros: 10_000, withContexts: true, collectCpuTime: true, useCPED: true, lineNumbers: false });
const als = new AsyncLocalStorage<unknown>();
const keep: unknown[] = [];
gc();
gc();
const before = oldSpaceMb();
for (let i = 0; i < n; i++) {
  if (mode === 'pprof') time.runWithContext(payload(), () => 0);
  else if (mode === 'als') als.run(payload(), () => 0);
  else keep.push(payload());
}
gc({ type: 'minor' });
gc({ type: 'minor' });
gc({ type: 'minor' });
const afterMinor = oldSpaceMb();
gc();
const afterFull = oldSpaceMb();
process.stdout.write(
  `${mode} N=${n}: old space +${(afterMinor - before).toFixed(1)} MB after 3 minor GCs, +${(afterFull - before).toFixed(1)} MB after a full GC (kept ${keep.length})\n`,
);
time.stop(false);
