import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FiguresTable } from '../../src/exemplars/index.js';
import type { RowFigures } from '../../src/exemplars/figures-table.js';
import { rng } from './helpers.js';
import { hex } from '../profile/fixtures.js';

function figures(t: FiguresTable, id: string): (RowFigures & { leaves: [number, number][] }) | undefined {
  const row = t.find(id);
  if (row < 0) return undefined;
  const out = { samples: 0, wallNs: 0, cpuNs: 0, gcNs: 0, leaves: [] as [number, number][] };
  t.addTo(row, out);
  t.forEachLeaf(row, (loc, n) => out.leaves.push([loc, n]));
  out.leaves.sort((a, b) => a[0] - b[0]);
  return out;
}

test('FiguresTable: the same sums and leaves per id as a Map of objects, across index growth', () => {
  const r = rng(7);
  const ids = Array.from({ length: 3000 }, () => hex(8));
  const t = new FiguresTable(16);
  const want = new Map<string, { samples: number; wallNs: number; cpuNs: number; gcNs: number; leaves: Map<number, number> }>();
  for (let i = 0; i < 20000; i++) {
    const id = ids[Math.floor(r() * r() * ids.length)] as string;
    const count = 1 + Math.floor(r() * 3);
    const wall = count * 10_000_000;
    const cpu = Math.floor(r() * 9_000_000);
    const leaf = Math.floor(r() * 5) - 1; // -1: a sample without a location
    const gc = r() < 0.1;
    const row = t.findOrAdd(id, Infinity);
    assert.ok(row >= 0);
    t.add(row, count, wall, cpu, leaf, gc);
    let w = want.get(id);
    if (w === undefined) want.set(id, (w = { samples: 0, wallNs: 0, cpuNs: 0, gcNs: 0, leaves: new Map() }));
    w.samples += count;
    w.wallNs += wall;
    w.cpuNs += cpu;
    if (gc) w.gcNs += wall;
    if (leaf >= 0) w.leaves.set(leaf, (w.leaves.get(leaf) ?? 0) + count);
  }
  assert.equal(t.size, want.size);
  for (const [id, w] of want) {
    const got = figures(t, id);
    assert.ok(got !== undefined, id);
    assert.deepEqual(got, {
      samples: w.samples,
      wallNs: w.wallNs,
      cpuNs: w.cpuNs,
      gcNs: w.gcNs,
      leaves: [...w.leaves].sort((a, b) => a[0] - b[0]),
    });
  }
  for (let i = 0; i < 200; i++) {
    const id = hex(8);
    if (!want.has(id)) assert.equal(t.find(id), -1, id);
  }
  const locations = new Set<number>();
  for (let r = 0; r < t.size; r++) t.forEachLeaf(r, (loc) => locations.add(loc));
  assert.deepEqual([...locations].sort(), [0, 1, 2, 3]);
});

test('FiguresTable: upper-case hex is the same id; ids that are not 16 hex digits are kept apart', () => {
  const t = new FiguresTable();
  const a = t.findOrAdd('00f067aa0ba902b7', 10);
  assert.equal(t.findOrAdd('00F067AA0BA902B7', 10), a);
  const odd = ['not-a-span-id!!!', 'abc', '', '00f067aa0ba902b', '00f067aa0ba902b70', 'g0f067aa0ba902b7'];
  const rows = odd.map((id) => t.findOrAdd(id, 10));
  assert.equal(new Set([a, ...rows]).size, odd.length + 1, 'one row each');
  odd.forEach((id, i) => assert.equal(t.find(id), rows[i], id));
  t.add(rows[0] as number, 2, 20, 5, 9, true);
  assert.deepEqual(figures(t, 'not-a-span-id!!!'), { samples: 2, wallNs: 20, cpuNs: 5, gcNs: 20, leaves: [[9, 2]] });
  assert.equal(t.find('ffffffffffffffff'), -1);
});

test('FiguresTable: no more than max ids; known ids still count when full', () => {
  const t = new FiguresTable();
  assert.ok(t.findOrAdd('0000000000000001', 2) >= 0);
  assert.ok(t.findOrAdd('0000000000000002', 2) >= 0);
  assert.equal(t.findOrAdd('0000000000000003', 2), -1);
  assert.equal(t.findOrAdd('odd', 2), -1);
  const row = t.findOrAdd('0000000000000002', 2);
  t.add(row, 1, 10, 0, -1, false);
  assert.equal(figures(t, '0000000000000002')?.samples, 1);
  assert.equal(t.size, 2);
});
