import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_SLOTS, SpanSlots } from '../../src/context/span-slots.js';
import type { SampleContext } from '../../src/context/index.js';

/** A fresh SampleContext, as sample-context.ts makes them (the id slot included). */
function sample(i: number, extra: Partial<SampleContext> = {}): SampleContext {
  const hex = (n: number, len: number): string => n.toString(16).padStart(len, '0');
  return {
    traceId: `${hex(0xabcdef01, 8)}${hex(i, 24)}`,
    spanId: hex(0x1000000 + i, 16),
    traceFlags: 1,
    localRootSpanId: hex(0xf00d, 16),
    name: `op-${i % 3}`,
    slotId: undefined,
    ...extra,
  } as SampleContext;
}

test('an id resolves to the live span object, then to copies of its labels once it ended', () => {
  const slots = new SpanSlots();
  const s = sample(7);
  slots.opened();
  const id = slots.idOf(s);
  assert.equal(typeof id, 'number');
  assert.ok(Number.isInteger(id) && id! > 0 && id! < 2 ** 30, 'a Smi, never 0');
  assert.equal(slots.idOf(s), id, 'the same span keeps its id');
  assert.equal(slots.resolve(id!), s, 'live: the object itself');
  (s as { name: string }).name = 'renamed';
  slots.release(s);
  const r = slots.resolve(id!);
  assert.notEqual(r, s, 'ended: made from the table, the object is let go');
  assert.deepEqual(
    { traceId: r?.traceId, spanId: r?.spanId, traceFlags: r?.traceFlags, localRootSpanId: r?.localRootSpanId, name: r?.name },
    { traceId: s.traceId, spanId: s.spanId, traceFlags: 1, localRootSpanId: s.localRootSpanId, name: 'renamed' },
  );
  assert.equal(slots.resolve(id!), r, 'one object per span until the window is labelled');
  assert.deepEqual(slots.stats(), { capacity: 4096, live: 0, ended: 1, stale: 0, full: 0 });
});

test('resolveInto gives the live object, fills the caller\'s scratch for an ended span (a local root equal to the span shares its string), and counts stale ids as resolve does', () => {
  const slots = new SpanSlots();
  slots.opened();
  const child = sample(5);
  const root = sample(6);
  (root as { localRootSpanId: string }).localRootSpanId = root.spanId;
  const idChild = slots.idOf(child)!;
  const idRoot = slots.idOf(root)!;
  const scratch = { traceId: '', spanId: '', traceFlags: 0, localRootSpanId: undefined as string | undefined, name: undefined as string | undefined };
  assert.equal(slots.resolveInto(idChild, scratch), child, 'live: the object itself');
  assert.equal(scratch.spanId, '', 'scratch untouched for a live span');
  slots.release(child);
  slots.release(root);
  assert.equal(slots.resolveInto(idChild, scratch), scratch, 'ended: into the scratch object');
  assert.deepEqual({ ...scratch }, { traceId: child.traceId, spanId: child.spanId, traceFlags: 1, localRootSpanId: child.localRootSpanId, name: child.name });
  assert.deepEqual({ ...slots.resolveInto(idRoot, scratch)! }, { traceId: root.traceId, spanId: root.spanId, traceFlags: 1, localRootSpanId: root.spanId, name: root.name });
  assert.equal(scratch.localRootSpanId, scratch.spanId);
  assert.deepEqual({ ...slots.resolve(idRoot)! }, { ...scratch }, 'resolve() reads the same');
  assert.equal(slots.resolveInto(idChild + 100, scratch), undefined, 'a slot no span had');
  assert.equal(slots.resolveInto(idChild + (1 << 18), scratch), undefined, 'another generation of the slot');
  assert.equal(slots.stats().stale, 2);
});

test('a slot is reused only after the window the span ended in and the next are labelled; old ids go stale, never to another span', () => {
  const slots = new SpanSlots();
  slots.opened(); // window 1
  const a = sample(1, { localRootSpanId: undefined, name: undefined });
  const idA = slots.idOf(a)!;
  slots.release(a);
  slots.opened(); // window 2
  slots.labelled(); // window 1 labelled: a's continuations may still be in window 2
  assert.equal(slots.resolve(idA)?.spanId, a.spanId);
  assert.equal(slots.resolve(idA)?.localRootSpanId, undefined);
  assert.equal(slots.resolve(idA)?.name, undefined);
  const b = sample(2);
  const idB = slots.idOf(b)!;
  assert.notEqual(idB & (MAX_SLOTS - 1), idA & (MAX_SLOTS - 1), 'not reusable yet: b gets a fresh slot');
  slots.opened(); // window 3
  slots.labelled(); // window 2 labelled: a's slot may be reused
  assert.equal(slots.resolve(idA)?.spanId, a.spanId, 'still there until reused');
  const cap = slots.stats().capacity;
  const c = sample(3);
  const idC = slots.idOf(c)!;
  assert.equal(idC & (MAX_SLOTS - 1), idA & (MAX_SLOTS - 1), 'the oldest reusable slot goes first, before never-used ones');
  assert.equal(slots.stats().capacity, cap);
  assert.notEqual(idC, idA, 'with another generation');
  assert.equal(slots.stats().ended, 0);
  assert.equal(slots.resolve(idA), undefined, 'the old id does not resolve to the new span');
  assert.equal(slots.idOf(a), undefined, 'an ended span whose slot went to another gets no id again (the caller uses the object)');
  assert.equal(slots.resolve(idC), c);
  assert.equal(slots.resolve(idB), b);
  assert.equal(slots.stats().stale, 1);
});

test('a span that ended a grace period before its window closed frees its slot when that window is labelled; one that ended later waits for the next', () => {
  let now = 0;
  const slots = new SpanSlots({ graceMs: 1000, now: () => now });
  const slotOf = (id: number): number => id & (MAX_SLOTS - 1);
  slots.opened(); // window 1, from t = 0
  const early = sample(1);
  const idEarly = slots.idOf(early)!;
  now = 2000;
  slots.release(early); // 8 s before the close
  const late = sample(2);
  const idLate = slots.idOf(late)!;
  now = 9500;
  slots.release(late); // 0.5 s before the close: its continuations may run in window 2
  now = 10_000;
  slots.opened(); // window 1 closed at 10 s
  now = 10_400;
  slots.labelled(); // window 1 labelled
  const a = sample(3);
  const idA = slots.idOf(a)!;
  assert.equal(slotOf(idA), slotOf(idEarly), "the early span's slot is reused at once");
  assert.equal(slots.resolve(idEarly), undefined, 'its old id is stale, not the new span');
  assert.equal(slots.resolve(idLate)?.spanId, late.spanId, 'the late one still resolves');
  const b = sample(4);
  const idB = slots.idOf(b)!;
  assert.notEqual(slotOf(idB), slotOf(idLate), 'the late one is not reusable yet');
  now = 20_000;
  slots.opened(); // window 2 closed
  slots.labelled(); // window 2 labelled
  const c = sample(5);
  assert.equal(slotOf(slots.idOf(c)!), slotOf(idLate), 'now it is');
  assert.equal(slots.stats().stale, 1);
});

test('live spans are never freed; the table grows; ids that are not lower-case hex keep their object', () => {
  const slots = new SpanSlots();
  slots.opened();
  const live = Array.from({ length: 5000 }, (_, i) => sample(i));
  const ids = live.map((s) => slots.idOf(s)!);
  assert.equal(new Set(ids).size, 5000);
  assert.equal(slots.stats().capacity, 8192, 'grown once');
  for (let i = 0; i < 4; i++) {
    slots.opened();
    slots.labelled();
  }
  assert.ok(
    live.every((s, i) => slots.resolve(ids[i]!) === s),
    'live spans resolve after many windows',
  );
  const upper = sample(9, { spanId: 'ABCDEF0123456789' });
  const idU = slots.idOf(upper)!;
  slots.release(upper);
  assert.equal(slots.resolve(idU), upper, 'kept as the object until freed');
});

test('names beyond the interned ones are kept per slot', () => {
  const slots = new SpanSlots();
  slots.opened();
  const many = Array.from({ length: 17_000 }, (_, i) => sample(i, { name: `GET /item/${i}` }));
  const ids = many.map((s) => slots.idOf(s)!);
  for (const s of many) slots.release(s);
  assert.equal(slots.resolve(ids[0]!)?.name, 'GET /item/0');
  assert.equal(slots.resolve(ids[16_999]!)?.name, 'GET /item/16999');
});

test('ended slots keep their order through a growth of the table', () => {
  const slots = new SpanSlots();
  const slotOf = (id: number): number => id & (MAX_SLOTS - 1);
  slots.opened(); // window 1
  const first = Array.from({ length: 3000 }, (_, i) => sample(i));
  const firstIds = first.map((s) => slots.idOf(s)!);
  for (const s of first) slots.release(s);
  slots.opened(); // window 2
  slots.labelled();
  slots.opened(); // window 3
  slots.labelled(); // window-1 spans may be reused now
  // Reusable slots go first, oldest first.
  const second = Array.from({ length: 2096 }, (_, i) => sample(10_000 + i));
  const secondIds = second.map((s) => slots.idOf(s)!);
  assert.deepEqual(secondIds.map(slotOf), firstIds.slice(0, 2096).map(slotOf), 'oldest first');
  for (const s of second) slots.release(s); // ended in window 3: at ring positions 3000..4095, then 0..999
  // The other 904 window-1 slots, then never-used ones, then the table grows
  // with the ring wrapped past its end.
  const third = Array.from({ length: 2100 }, (_, i) => sample(20_000 + i));
  const thirdIds = third.map((s) => slots.idOf(s)!);
  assert.deepEqual(thirdIds.slice(0, 904).map(slotOf), firstIds.slice(2096).map(slotOf));
  assert.equal(slots.stats().capacity, 8192, 'grown: the window-3 spans cannot be reused yet');
  assert.equal(slots.stats().ended, 2096);
  slots.opened(); // window 4
  slots.labelled(); // window 3 labelled: its continuations may be in window 4
  slots.opened();
  slots.labelled(); // window 4 labelled: the second batch may be reused
  const fifth = Array.from({ length: 2096 }, (_, i) => slotOf(slots.idOf(sample(40_000 + i))!));
  assert.deepEqual(fifth, secondIds.map(slotOf), 'the ring kept its order through the growth');
  assert.equal(slots.stats().capacity, 8192);
  for (const [i, s] of third.entries()) assert.equal(slots.resolve(thirdIds[i]!), s, 'live spans resolve');
  assert.equal(slots.resolve(firstIds[0]!), undefined, 'reused twice since');
});
