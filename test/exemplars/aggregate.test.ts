import assert from 'node:assert/strict';
import { test } from 'node:test';
import { aggregateWindow } from '../../src/exemplars/aggregate.js';
import type { WindowProfile } from '../../src/core/window.js';
import { fakeWindow } from './helpers.js';

const A = 'aaaaaaaaaaaaaaaa';
const B = 'bbbbbbbbbbbbbbbb';
const ROOT = 'cccccccccccccccc';
const ms = (n: number): number => n * 1_000_000;

function window(): WindowProfile {
  return fakeWindow('p1', 0n, 10_000_000_000n, [
    { spanId: A, rootId: ROOT, fn: 'burn', file: '/srv/lib/work.js', line: 12, wallNs: ms(1), cpuNs: ms(1), count: 3 },
    { spanId: A, rootId: ROOT, fn: 'Garbage Collection', wallNs: ms(1), cpuNs: ms(1) },
    { spanId: B, rootId: ROOT, fn: 'wait', file: '/srv/w.js', wallNs: ms(1), cpuNs: 0, count: 2 },
    { spanId: ROOT, rootId: ROOT, fn: '', file: '/srv/main.js', line: 3, wallNs: ms(1), cpuNs: ms(1) },
    { fn: 'idle', wallNs: ms(1), cpuNs: 0 },
  ]);
}

/** The same window with its functions and locations numbered 500, 497, … instead of 1..n. */
function renumbered(w: WindowProfile): WindowProfile {
  const p = w.wall;
  const map = new Map<number, number>();
  p.function.forEach((f, i) => map.set(Number(f.id), 500 - 3 * i));
  for (const f of p.function) f.id = map.get(Number(f.id)) as number;
  for (const l of p.location) {
    l.id = map.get(Number(l.id)) as number;
    for (const line of l.line) line.functionId = map.get(Number(line.functionId)) as number;
  }
  for (const s of p.sample) s.locationId = s.locationId.map((id) => map.get(Number(id)) as number);
  return w;
}

function summary(w: WindowProfile): unknown {
  const agg = aggregateWindow(w, 100);
  const rows = [A, B, ROOT].map((id) => {
    const row = agg.bySpan.find(id);
    const out = { samples: 0, wallNs: 0, cpuNs: 0, gcNs: 0 };
    if (row >= 0) agg.bySpan.addTo(row, out);
    const leaves: string[] = [];
    if (row >= 0) agg.bySpan.forEachLeaf(row, (loc, n) => leaves.push(`${agg.frameName(loc)} ×${n}`));
    return { id, ...out, leaves };
  });
  const root = agg.byLocalRoot.find(ROOT);
  const sub = { samples: 0, wallNs: 0, cpuNs: 0, gcNs: 0 };
  if (root >= 0) agg.byLocalRoot.addTo(root, sub);
  return { rows, sub };
}

void test('window aggregates: figures, GC time and leaf names per span', () => {
  assert.deepEqual(summary(window()), {
    rows: [
      // sampled wall = samples × the 1 ms interval of fakeWindow
      { id: A, samples: 4, wallNs: ms(4), cpuNs: ms(2), gcNs: ms(1), leaves: ['burn (work.js:12) ×3', 'Garbage Collection ×1'] },
      { id: B, samples: 2, wallNs: ms(2), cpuNs: 0, gcNs: 0, leaves: ['wait (w.js) ×2'] },
      { id: ROOT, samples: 1, wallNs: ms(1), cpuNs: ms(1), gcNs: 0, leaves: ['(anonymous) (main.js:3) ×1'] },
    ],
    // the root's subtree without its own samples
    sub: { samples: 6, wallNs: ms(6), cpuNs: ms(2), gcNs: ms(1) },
  });
});

void test('window aggregates: ids that are not 1..n in list order give the same figures and names', () => {
  assert.deepEqual(summary(renumbered(window())), summary(window()));
});
