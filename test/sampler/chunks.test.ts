/**
 * The wall sampler's window build: a window collected in several native
 * chunks and assembled in slices gives one consistent pprof profile whose
 * samples carry the span labels of the spans that ran, and the same steps
 * run synchronously or sliced over event-loop turns.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { context, trace } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import {
  detectContextMode,
  FrameBinder,
  HookBinder,
  SpanfuseContextManager,
} from '../../src/context/index.js';
import type { SamplerBinder } from '../../src/context/index.js';
import { LABEL_SPAN_ID, LABEL_THREAD_ID, LABEL_TIMESTAMP_NS } from '../../src/core/labels.js';
import { runSliced, runSync } from '../../src/core/slices.js';
import { testSampler, spin } from '../support/sampler.js';
import type { RawWindow } from '../../src/sampler/index.js';
import { packTimeProfile, stopCapturing } from '../../src/sampler/native-chunk.js';
import { findLabel, sampleTimeNs, sampleTimes } from '../../src/core/pprof.js';
import { time } from '../../src/core/dd-pprof.js';
import { serializeTimeProfile } from '@datadog/pprof/out/src/profile-serializer.js';
import type { TimeProfile } from '@datadog/pprof/out/src/v8-types.js';
import { drainSteps } from '../support/steps.js';

test('a window of several native chunks is assembled, sliced, into one consistent labelled profile', async () => {
  const mode = detectContextMode();
  const manager = new SpanfuseContextManager();
  const binder: SamplerBinder = mode === 'async-context-frame' ? new FrameBinder() : new HookBinder(() => manager.activeSample());
  manager.enable();
  context.setGlobalContextManager(manager);
  trace.setGlobalTracerProvider(new BasicTracerProvider());
  const tracer = trace.getTracer('chunks-test');
  // 1 ms sampling, chunks of ~100 samples: about one native stop every 100 ms.
  const sampler = testSampler({ collectCpuTime: false, mode, windowMs: 60_000, chunkSamples: 100 });
  assert.equal(sampler.chunkMs, 100);
  sampler.start();
  manager.setBinder(binder);
  binder.enable();
  const spanIds = new Set<string>();
  try {
    for (let i = 0; i < 12; i++) {
      await tracer.startActiveSpan(`op-${i}`, async (span) => {
        spanIds.add(span.spanContext().spanId);
        spin(40);
        await sleep(1);
        spin(40);
        span.end();
      });
    }
    const raw = sampler.close(true);
    assert.ok(raw !== undefined);
    assert.ok(raw.chunks.length >= 3, `expected several chunks, got ${raw.chunks.length}`);
    // Every stop is packed at the stop: flat arrays, one entry per sample.
    for (const c of raw.chunks) {
      assert.equal(c.packed.stackStart.length, c.samples + 1);
      assert.equal(c.packed.contextIndex.length, c.samples);
      assert.equal(c.packed.values.length, c.samples * c.packed.valuesPerSample);
    }
    // The build yields every few hundred samples: count the steps, then let
    // runSliced drive a second build of the same chunks' samples.
    const samplesIn = raw.chunks.reduce((n, c) => n + c.samples, 0);
    const { yields, value: w } = drainSteps(sampler.windowSteps(raw));
    assert.ok(yields >= Math.floor(samplesIn / 256), `${yields} yields for ${samplesIn} samples`);
    const p = w.wall;
    const strings = p.stringTable.strings;
    // Every sample of every stop is in the window once, with all its values.
    assert.equal(p.sample.length, samplesIn);
    for (const s of p.sample) assert.equal(s.value.length, p.sampleType.length);
    const locationIds = new Set(p.location.map((l) => Number(l.id)));
    const functionIds = new Set(p.function.map((f) => Number(f.id)));
    assert.equal(locationIds.size, p.location.length, 'location ids are unique');
    for (const l of p.location) for (const line of l.line) assert.ok(functionIds.has(Number(line.functionId)));
    const spanKey = strings.indexOf(LABEL_SPAN_ID);
    const threadKey = strings.indexOf(LABEL_THREAD_ID);
    const tsKey = strings.indexOf(LABEL_TIMESTAMP_NS);
    assert.ok(spanKey > 0 && threadKey > 0 && tsKey > 0);
    const seen = new Set<string>();
    let spinSamples = 0;
    let spinLabelled = 0;
    // Sample times are kept beside the samples, not as a label of each.
    const times = sampleTimes(p);
    assert.ok(times !== undefined && times.key === tsKey && times.us.length === p.sample.length);
    for (const [i, s] of p.sample.entries()) {
      assert.ok(!s.label.some((l) => Number(l.key) === tsKey), 'no sample carries its time as a label object');
      for (const id of s.locationId) assert.ok(locationIds.has(Number(id)), 'every stack frame is in the location table');
      assert.ok(s.label.some((l) => Number(l.key) === threadKey), 'every sample names its thread');
      const names = s.locationId.map((id) => {
        const loc = p.location.find((l) => Number(l.id) === Number(id));
        const fn = p.function.find((f) => Number(f.id) === Number(loc?.line[0]?.functionId));
        return strings[Number(fn?.name)] ?? '';
      });
      const span = s.label.find((l) => Number(l.key) === spanKey);
      if (span !== undefined) seen.add(strings[Number(span.str)] ?? '');
      if (names.includes('spin')) {
        spinSamples++;
        if (span !== undefined) {
          spinLabelled++;
          const ts = sampleTimeNs(times, i, s.label, tsKey);
          assert.ok(ts !== undefined, 'a sample in a span has its timestamp');
          // A Unix time in ns (not a context index): within the window.
          assert.ok(ts >= raw.startUnixNs - 1_000_000_000n && ts <= raw.endUnixNs + 1_000_000_000n);
        }
      }
    }
    assert.ok(spinSamples > 50, `expected the spin loop to be sampled, got ${spinSamples}`);
    // Samples with the same stack, across chunks, share one location-id array.
    const byStack = new Map<string, unknown>();
    let shared = 0;
    for (const s of p.sample) {
      const k = s.locationId.join(',');
      const first = byStack.get(k);
      if (first === undefined) byStack.set(k, s.locationId);
      else {
        assert.equal(s.locationId, first, `stack ${k} has two arrays`);
        shared++;
      }
    }
    assert.ok(shared > 0, 'some stacks repeat');
    assert.equal(spinLabelled, spinSamples, 'every sample of the spin loop carries its span');
    for (const id of seen) assert.ok(spanIds.has(id), `span id ${id} is one of the test's spans`);
    assert.ok(seen.size >= 10, `samples of most spans across chunks, got ${seen.size}`);
  } finally {
    binder.disable();
    manager.setBinder(undefined);
    sampler.close(false);
    manager.disable();
  }
});

test('runSliced gives the event loop a turn between slices and returns the result; runSync runs it all at once', async () => {
  function* work(): Generator<void, number, void> {
    let sum = 0;
    for (let i = 1; i <= 5; i++) {
      sum += i;
      yield;
    }
    return sum;
  }
  let turned = false;
  setImmediate(() => {
    turned = true;
  });
  // A 0 ms budget: every yield ends a slice, so a setImmediate queued before
  // has run by the time the result is back.
  assert.equal(await runSliced(work(), 0), 15);
  assert.equal(turned, true);
  assert.equal(runSync(work()), 15);
});

test('a stop packed from the native profile holds what @datadog/pprof\'s serializer makes of it: frames, values, contexts', () => {
  const mode = detectContextMode();
  time.start({ intervalMicros: 1000, withContexts: true, collectCpuTime: true, useCPED: mode === 'async-context-frame', workaroundV8Bug: false, lineNumbers: false });
  let raw: TimeProfile;
  try {
    for (let i = 0; i < 30; i++) {
      const work = (): number => spin(2) + churn(2000).length;
      if (mode === 'async-context-frame') time.runWithContext({ n: i }, work);
      else {
        time.setContext({ n: i });
        work();
      }
    }
  } finally {
    raw = stopCapturing(() => time.stop(false));
  }
  // The oracle: @datadog/pprof's own serializer on the same native profile,
  // each context labelled with its index in visiting order (as spanfuse's
  // label callback did before stops were packed natively).
  const seen: Array<{ context: unknown; timestampUs: number }> = [];
  const expected = serializeTimeProfile(raw, 1000, undefined, true, ({ context }) => {
    if (context === undefined) return {};
    seen.push({ context: context.context, timestampUs: Number(context.timestamp) });
    return { index: seen.length - 1 };
  });
  const chunk = packTimeProfile(raw, 1000);
  const k = chunk.packed;
  const es = expected.stringTable.strings;
  const frame = (p: { fn: string; file: string; line: number }): string => `${p.fn}@${p.file}:${p.line}`;
  const expectedFrames = (ids: ReadonlyArray<number | bigint>): string[] =>
    ids.map((id) => {
      const loc = expected.location[Number(id) - 1];
      const fn = expected.function[Number(loc?.line[0]?.functionId) - 1];
      return frame({ fn: es[Number(fn?.name)] ?? '?', file: es[Number(fn?.filename)] ?? '?', line: Number(loc?.line[0]?.line ?? 0) });
    });
  const packedFrames = (i: number): string[] =>
    Array.from(k.stacks.subarray(k.stackStart[i], k.stackStart[i + 1])).map((id) => {
      const fnId = k.locations[(id - 1) * 3 + 1] as number;
      return frame({
        fn: k.strings[k.functions[(fnId - 1) * 3 + 1] as number] ?? '?',
        file: k.strings[k.functions[(fnId - 1) * 3 + 2] as number] ?? '?',
        line: k.locations[(id - 1) * 3 + 2] as number,
      });
    });
  assert.ok(expected.sample.length > 30, `a stop with samples (${expected.sample.length})`);
  assert.equal(chunk.samples, expected.sample.length);
  assert.equal(k.valuesPerSample, expected.sampleType.length);
  assert.equal(k.intervalNanos, Number(expected.period));
  const indexKey = es.indexOf('index');
  for (let i = 0; i < chunk.samples; i++) {
    const e = expected.sample[i];
    assert.ok(e !== undefined);
    assert.deepEqual(packedFrames(i), expectedFrames(e.locationId), `sample ${i}'s stack`);
    assert.deepEqual(Array.from(k.values.subarray(i * k.valuesPerSample, (i + 1) * k.valuesPerSample)), e.value.map(Number), `sample ${i}'s values`);
    const label = findLabel(e.label, indexKey);
    const at = k.contextIndex[i] as number;
    if (label === undefined) assert.equal(at, -1, `sample ${i} has no context`);
    else {
      const want = seen[Number(label.num)];
      assert.ok(want !== undefined);
      assert.equal(chunk.contexts[at], want.context, `sample ${i}'s context is the value the sampler held`);
      assert.equal(chunk.timestampsUs[at], want.timestampUs);
    }
  }
  assert.equal(chunk.contexts.length, seen.length);
  const names = new Set(Array.from({ length: chunk.samples }, (_, i) => packedFrames(i).map((f) => f.split('@')[0])).flat());
  assert.ok(names.has('work'), `the test's own frames are there: ${[...names].join(', ')}`);
});

/** Allocate, so that the collector runs while the sampler does. */
function churn(n: number): number[][] {
  const out: number[][] = [];
  for (let i = 0; i < n; i++) out.push([i, i + 1]);
  return out;
}

test('a window of two stops is built in time order, their tables merged', () => {
  const sampler = testSampler({ collectCpuTime: false });
  sampler.start();
  let a: RawWindow | undefined;
  let b: RawWindow | undefined;
  try {
    spin(40);
    a = sampler.close(true);
    spin(40);
    b = sampler.close(true);
  } finally {
    sampler.close(false);
  }
  const first = a?.chunks.at(-1);
  const second = b?.chunks.at(-1);
  assert.ok(a !== undefined && b !== undefined && first !== undefined && second !== undefined);
  const n1 = first.samples;
  const n2 = second.samples;
  assert.ok(n1 > 10 && n2 > 10, `samples in both stops (${n1}, ${n2})`);
  const w = runSync(sampler.windowSteps({ ...a, endUnixNs: b.endUnixNs, chunks: [first, second] }));
  const p = w.wall;
  assert.equal(p.sample.length, n1 + n2);
  const strings = p.stringTable.strings;
  const threadKey = strings.indexOf(LABEL_THREAD_ID);
  for (const s of p.sample) assert.ok(s.label.some((l) => Number(l.key) === threadKey), 'every sample names its thread');
  const locationIds = new Set(p.location.map((l) => Number(l.id)));
  for (const s of p.sample) for (const id of s.locationId) assert.ok(locationIds.has(Number(id)));
  // The tables are merged: a function in both stops (the test's own frames) has one entry.
  const keys = p.function.map((f) => `${strings[Number(f.name)]}@${strings[Number(f.filename)]}`);
  assert.equal(new Set(keys).size, keys.length, 'one function entry per name and file');
  assert.ok(keys.some((k) => k.includes('chunks.test')), 'the test file is among the frames');
  // Samples of the earlier stop come first: the wall values sum to about each stop's span.
  const wallNs = (from: number, to: number): number => p.sample.slice(from, to).reduce((t, s) => t + Number(s.value[1]), 0);
  assert.ok(wallNs(0, n1) > 20e6 && wallNs(n1, n1 + n2) > 20e6, 'each stop holds its ~40 ms of samples');
});

test('stops inside a window cut every window the same way: the count starts again at each close', async () => {
  // 1 ms sampling, 600-sample chunks, 1 s windows: two parts of ~500 ms,
  // one stop in the middle of each window.
  const sampler = testSampler({ collectCpuTime: false, windowMs: 1000, chunkSamples: 600 });
  assert.equal(sampler.chunkMs, 500);
  sampler.start();
  const counts: number[] = [];
  try {
    // A window that closes late (here 1.3 s, as a busy loop would make it)
    // must not leave the next one a stop just after its start, nor a tiny
    // one just before its close.
    for (const ms of [1300, 1000, 1000]) {
      await sleep(ms);
      const raw = sampler.close(true);
      assert.ok(raw !== undefined);
      counts.push(raw.chunks.length);
    }
  } finally {
    sampler.close(false);
  }
  // Each window: one stop at ~0.5 s and the close. In the late first
  // window the stop due at ~1.0 s is skipped (the close was due then).
  assert.deepEqual(counts, [2, 2, 2]);
});

test('a stop keeps the first native profile: the second stop of a restart from scratch passes through', () => {
  // @datadog/pprof stops the native profiler a second time when it finds it
  // stuck (and starts it again); a stuck profiler cannot be made here, so a
  // stand-in for the native class counts the calls.
  const profiles = [{ startTime: 1 }, { startTime: 2 }];
  const returned: unknown[] = [];
  const proto = {
    stop(): unknown {
      return profiles.shift();
    },
  };
  const raw = stopCapturing(() => {
    returned.push(proto.stop(), proto.stop());
  }, proto);
  assert.equal(raw.startTime, 1, 'the first stop is the chunk');
  assert.equal((returned[0] as { topDownRoot?: { children: unknown[] } }).topDownRoot?.children.length, 0, 'the serializer gets an empty profile');
  assert.deepEqual(returned[1], { startTime: 2 }, 'the second stop gets its own result');
  assert.equal(proto.stop(), undefined, 'the method is put back');
  assert.throws(() => stopCapturing(() => undefined, proto), /without a native profile/);
});
