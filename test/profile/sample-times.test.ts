// Sample times kept beside a profile's samples (SampleTimes, how the
// assembly stores them) must mean exactly what an `end_timestamp_ns` label
// on each sample means, to every writer and reader of a window.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Profile, sampleOf, sampleTimeNs, sampleTimes, setSampleTimes } from '../../src/core/pprof.js';
import { LABEL_TIMESTAMP_NS } from '../../src/core/labels.js';
import { contextLoss } from '../../src/context-loss/window-figure.js';
import { mergeProfiles } from '../../src/debug/merge.js';
import { encodeOtlpRequest, encodePprofSync, profileResource, Scrubber } from '../../src/profile/index.js';
import type { ScrubConfig } from '../../src/profile/index.js';
import { handProfile, makeWindow, newSpan } from './fixtures.js';

const config: ScrubConfig = { denyKeys: [], allowKeys: [], rules: [], appRoot: '/srv/app', userNames: [] };
// Past 2^53 ns: only exact integer arithmetic keeps the last digits.
const T0_US = 1_790_000_000_123_457;

/** A window whose samples carry their times as labels (the last one), one without a time. */
const a = newSpan('GET /a?token=s3cr3t');
const b = newSpan('GET /b');

function labelled(): Profile {
  const thread = { 'thread.id': '7', 'thread.name': 'main' };
  const f = (name: string, line: number): { name: string; file: string; line: number } => ({ name, file: '/srv/app/x.js', line });
  return handProfile(
    [
      ['sample', 'count'],
      ['wall', 'nanoseconds'],
    ],
    [
      { stack: [f('work', 1), f('main', 9)], values: [1, 10_000_000], labels: { ...thread, ...a, end_timestamp_ns: BigInt(T0_US) * 1000n } },
      { stack: [f('work', 1), f('main', 9)], values: [1, 10_000_000], labels: { ...thread, ...a, end_timestamp_ns: BigInt(T0_US + 10_003) * 1000n } },
      { stack: [f('glue', 3), f('main', 9)], values: [1, 9_000_000], labels: { ...thread, end_timestamp_ns: BigInt(T0_US + 20_001) * 1000n } },
      { stack: [f('other', 5)], values: [1, 11_000_000], labels: { ...thread, ...b, end_timestamp_ns: BigInt(T0_US + 30_000) * 1000n } },
      { stack: [f('idle', 7)], values: [1, 10_000_000], labels: { ...thread } },
    ],
  );
}

/** The same profile with each time moved from its label into SampleTimes. */
function columned(p: Profile): Profile {
  const key = p.stringTable.strings.indexOf(LABEL_TIMESTAMP_NS);
  assert.ok(key > 0);
  const us = new Float64Array(p.sample.length).fill(Number.NaN);
  const sample = p.sample.map((s, i) => {
    const ts = s.label.find((l) => Number(l.key) === key);
    if (ts !== undefined) us[i] = Number(BigInt(ts.num) / 1000n);
    return sampleOf(s.locationId, s.value, s.label.filter((l) => l !== ts));
  });
  const out = new Profile({ ...p, sample });
  return setSampleTimes(out, { key, us });
}

const window = (p: Profile): ReturnType<typeof makeWindow> =>
  makeWindow(p, BigInt(T0_US) * 1000n - 1_000_000n, BigInt(T0_US) * 1000n + 100_000_000n, { profileId: 'ab'.repeat(16) });

void test('a time beside the sample reads as its label would, to the nanosecond', () => {
  const p = columned(labelled());
  const times = sampleTimes(p);
  assert.ok(times !== undefined);
  assert.equal(sampleTimeNs(times, 0, p.sample[0]!.label, times.key), 1_790_000_000_123_457_000n);
  assert.equal(sampleTimeNs(times, 4, p.sample[4]!.label, times.key), undefined, 'a sample without a time has none');
  // Outside the kept times (a sample appended later), the label counts.
  const key = times.key;
  assert.equal(sampleTimeNs(times, 9, labelled().sample[1]!.label, key), BigInt(T0_US + 10_003) * 1000n);
});

void test('pprof: the same bytes whether the times are labels or kept beside the samples', () => {
  const a = encodePprofSync(labelled());
  const b = encodePprofSync(columned(labelled()));
  assert.ok(a.length > 0);
  assert.deepEqual(Buffer.from(b), Buffer.from(a));
  // And the decoded times are exact.
  const back = Profile.decode(b);
  const key = back.stringTable.strings.indexOf(LABEL_TIMESTAMP_NS);
  const ts = back.sample.map((s) => s.label.find((l) => Number(l.key) === key)?.num);
  assert.deepEqual(
    ts.map((v) => (v === undefined ? undefined : BigInt(v))),
    [T0_US, T0_US + 10_003, T0_US + 20_001, T0_US + 30_000].map((u) => BigInt(u) * 1000n).concat([undefined as unknown as bigint]),
  );
});

void test('OTLP: the same request whether the times are labels or kept beside the samples', () => {
  const options = { resource: profileResource('svc'), scopeName: 'spanfuse', scopeVersion: '0.0.0' };
  const a = encodeOtlpRequest(window(labelled()), options);
  const b = encodeOtlpRequest(window(columned(labelled())), options);
  assert.deepEqual(Buffer.from(b), Buffer.from(a));
});

void test('scrubbing keeps the times beside the samples, and leaves them out under a denied key', () => {
  for (const cfg of [config, { ...config, denyKeys: ['end_timestamp_ns'] }]) {
    const sa = new Scrubber(cfg);
    const sb = new Scrubber(cfg);
    const a = sa.scrub(window(labelled())).wall;
    const b = sb.scrub(window(columned(labelled()))).wall;
    assert.deepEqual(Buffer.from(encodePprofSync(b)), Buffer.from(encodePprofSync(a)));
    assert.deepEqual(sb.stats(), sa.stats());
    if (cfg.denyKeys.length > 0) assert.equal(sampleTimes(b), undefined);
    else assert.equal(sampleTimes(b)?.us.length, b.sample.length);
  }
  // The span name's query string was scrubbed in both (a changed label): the times stay by index.
  const b = new Scrubber(config).scrub(window(columned(labelled()))).wall;
  assert.equal(sampleTimeNs(sampleTimes(b), 3, b.sample[3]!.label, 0), BigInt(T0_US + 30_000) * 1000n);
});

void test('context loss and the debug merge read the times beside the samples as labels', () => {
  // In flight from T0 + 15 ms to T0 + 25 ms: the sample outside a span at T0 + 20 ms lost its context.
  const t0Ms = T0_US / 1000;
  const timeline = { busyAtStart: false, transitions: Float64Array.of(t0Ms + 15, t0Ms + 25), overflowed: false };
  const a = contextLoss(labelled(), timeline);
  const b = contextLoss(columned(labelled()), timeline);
  assert.deepEqual(b, a);
  assert.equal(a.unattributedSamples, 1);
  const from = BigInt(T0_US + 5_000) * 1000n;
  const to = BigInt(T0_US + 25_000) * 1000n;
  const ma = mergeProfiles([labelled()], from, to);
  const mb = mergeProfiles([columned(labelled())], from, to);
  assert.equal(ma.sample.length, 2);
  assert.deepEqual(Buffer.from(encodePprofSync(mb)), Buffer.from(encodePprofSync(ma)));
});
