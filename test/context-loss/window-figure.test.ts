import assert from 'node:assert/strict';
import { test } from 'node:test';
import { contextLoss, contextLossSteps } from '../../src/context-loss/window-figure.js';
import type { InFlightTimeline } from '../../src/context-loss/in-flight.js';
import { IdIndex } from '../../src/core/profile-index.js';
import { Function as PFunction, Label, Line, Location, Profile, Sample, StringTable, ValueType } from '../../src/core/pprof.js';
import { STEP_ENTRIES } from '../../src/core/slices.js';
import { drainSteps } from '../support/steps.js';

interface Frame {
  readonly fn: string;
  readonly file: string;
}

interface Spec {
  /** Leaf first. */
  readonly stack: readonly Frame[];
  readonly span?: boolean;
  readonly atMs: number;
}

const APP = (fn: string): Frame => ({ fn, file: '/srv/app.js' });
const NODE = (fn: string): Frame => ({ fn, file: 'node:internal/fs' });
const V8 = (fn: string): Frame => ({ fn, file: '' });

/**
 * A wall profile with one location per distinct frame. `ids` numbers
 * functions and locations: 1..n in list order (as spanfuse does), or
 * something else (a profile read from elsewhere).
 */
function profileOf(specs: readonly Spec[], ids: (i: number) => number = (i) => i + 1): Profile {
  const st = new StringTable();
  const fnByKey = new Map<string, number>();
  const functions: InstanceType<typeof PFunction>[] = [];
  const locations: InstanceType<typeof Location>[] = [];
  const keySpan = st.dedup('span_id');
  const keyTs = st.dedup('end_timestamp_ns');
  const samples = specs.map((s, n) => {
    const locationId = s.stack.map((f) => {
      const key = `${f.fn}|${f.file}`;
      let id = fnByKey.get(key);
      if (id === undefined) {
        id = ids(functions.length);
        fnByKey.set(key, id);
        functions.push(new PFunction({ id, name: st.dedup(f.fn), filename: st.dedup(f.file) }));
        locations.push(new Location({ id, line: [new Line({ functionId: id, line: 1 })] }));
      }
      return id;
    });
    const label = [new Label({ key: keyTs, num: BigInt(s.atMs) * 1_000_000n })];
    if (s.span === true) label.push(new Label({ key: keySpan, str: st.dedup(`${n.toString(16).padStart(16, '0')}`) }));
    return new Sample({ locationId, value: [1, 10_000_000], label });
  });
  return new Profile({
    sampleType: [
      new ValueType({ type: st.dedup('sample'), unit: st.dedup('count') }),
      new ValueType({ type: st.dedup('wall'), unit: st.dedup('nanoseconds') }),
    ],
    sample: samples,
    location: locations,
    function: functions,
    stringTable: st,
  });
}

/** Spans in flight from 1,000 to 2,000 ms only. */
const TIMELINE: InFlightTimeline = { busyAtStart: false, transitions: new Float64Array([1000, 2000]), overflowed: false };

const SPECS: readonly Spec[] = [
  // In flight, with a span: attributed.
  { stack: [APP('handler'), APP('main')], span: true, atMs: 1100 },
  // In flight, no span: lost, named from the first app frame, not from readFileSync.
  { stack: [NODE('readFileSync'), APP('loadConfig'), APP('handler')], atMs: 1200 },
  { stack: [NODE('readFileSync'), APP('loadConfig'), APP('handler')], atMs: 1300 },
  { stack: [APP('parse'), APP('handler')], atMs: 1400 },
  // Not JS work: never counted.
  { stack: [V8('(idle)')], atMs: 1500 },
  { stack: [V8('(program)')], atMs: 1510 },
  { stack: [V8('Garbage Collection')], atMs: 1520 },
  // JS work with nothing in flight: CPU, not in flight.
  { stack: [APP('timer')], atMs: 2500 },
];

void test('context loss: JS samples without a span while spans are in flight, named from the first app frame', () => {
  const f = contextLoss(profileOf(SPECS), TIMELINE);
  assert.equal(f.cpuSamples, 5);
  assert.equal(f.inFlightSamples, 4);
  assert.equal(f.unattributedSamples, 3);
  assert.equal(f.share, 0.75);
  assert.deepEqual(
    f.topFunctions.map((t) => [t.name, t.samples]),
    [
      ['loadConfig', 2],
      ['parse', 1],
    ],
  );
  assert.deepEqual(
    f.topStacks.map((t) => [t.stack, t.samples]),
    [
      ['loadConfig < handler', 2],
      ['parse < handler', 1],
    ],
  );
  assert.equal(f.approximate, false);
});

void test('context loss: a profile whose ids are not 1..n in list order gives the same figure', () => {
  const dense = contextLoss(profileOf(SPECS), TIMELINE);
  const sparse = contextLoss(
    profileOf(SPECS, (i) => 1000 - 7 * i),
    TIMELINE,
  );
  assert.deepEqual(sparse, dense);
});

void test('context loss in steps: a large window yields between slices and ends with the same figure', () => {
  const many: Spec[] = [];
  for (let i = 0; i < 10 * STEP_ENTRIES; i++) many.push({ stack: [APP(`f${i % 37}`), APP('handler')], span: i % 4 !== 0, atMs: 1000 + (i % 900) });
  const p = profileOf(many);
  const { yields, value } = drainSteps(contextLossSteps(p, TIMELINE));
  assert.ok(yields >= 9, `yielded ${yields} times for ${many.length} samples`);
  assert.deepEqual(value, contextLoss(p, TIMELINE));
  assert.equal(value.unattributedSamples, many.length / 4);
});

void test('IdIndex: position by id, dense or not, -1 for an id not in the list', () => {
  const dense = new IdIndex([{ id: 1 }, { id: 2 }, { id: 3 }]);
  assert.deepEqual([1, 2, 3, 4, 0].map((id) => dense.at(id)), [0, 1, 2, -1, -1]);
  const sparse = new IdIndex([{ id: 10n }, { id: 2 }, { id: 7 }]);
  assert.deepEqual([10, 2, 7, 1, 3].map((id) => sparse.at(id)), [0, 1, 2, -1, -1]);
});
