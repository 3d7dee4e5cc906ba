import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { AsyncLocalStorage } from 'node:async_hooks';
import { context, createContextKey, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import type { Span } from '@opentelemetry/api';
import { time } from '@datadog/pprof';
import { start } from '../../src/index.js';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { resolveSample, sampleName, sampleOfSpan } from '../../src/context/index.js';
import { LocalRootProcessor } from '../../src/tracing/index.js';
import { ThreadContextPublisher } from '../../src/runtime/index.js';

/**
 * The context manager with the sampler bound (one frame per entry on the
 * sampler's own key in AsyncContextFrame mode, a slot write in hooks mode)
 * must propagate exactly as the stock manager does, before, during and after
 * spanfuse runs; and the sampler must hold the span's small SampleContext,
 * never the span.
 */
test('context propagation, sampler values and local roots with spanfuse running, and after shutdown', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-cm-'));
  const sf = start({ outputDir: dir, spansFile: false, windowMs: 600_000 });
  assert.ok(sf);
  try {
    const tracer = trace.getTracer('cm-test');
    const seen: Record<string, unknown> = {};
    let pendingAfterShutdown: Promise<Span | undefined> | undefined;
    let rootSpan: Span | undefined;
    await tracer.startActiveSpan('root', async (root) => {
      rootSpan = root;
      assert.equal(trace.getActiveSpan(), root);
      // What the native sampler holds for the running code: the span's id in
      // the span table (AsyncContextFrame), or its SampleContext (hooks).
      const raw = time.getContext();
      if (sf.mode === 'async-context-frame') assert.equal(typeof raw, 'number', 'a Smi: nothing young kept alive');
      const held = resolveSample(raw) as { spanId?: unknown; span?: unknown };
      assert.equal(held.spanId, root.spanContext().spanId, `sampler holds ${JSON.stringify(raw)}`);
      assert.equal('span' in held, false, 'the sampler must not hold the span itself');

      await tracer.startActiveSpan('child', async (child) => {
        await new Promise((r) => setTimeout(r, 5));
        assert.equal(trace.getActiveSpan(), child, 'child after a timer');
        await tracer.startActiveSpan('grandchild', async (g) => {
          await Promise.resolve();
          assert.equal(trace.getActiveSpan(), g);
          assert.equal(sampleOfSpan(g).localRootSpanId, root.spanContext().spanId, 'grandchild local root');
          g.end();
        });
        // Entering the root context suppresses the span, and comes back.
        context.with(ROOT_CONTEXT, () => assert.equal(trace.getActiveSpan(), undefined));
        assert.equal(trace.getActiveSpan(), child);
        const bound = context.bind(trace.setSpan(ROOT_CONTEXT, root), () => trace.getActiveSpan());
        assert.equal(bound(), root, 'context.bind');
        child.end();
      });
      assert.equal(trace.getActiveSpan(), root, 'root after the child ended');
      // A continuation created now and resumed after shutdown keeps its span.
      pendingAfterShutdown = new Promise((r) => setTimeout(r, 50)).then(() => trace.getActiveSpan());
      await sf.shutdown();
      seen['afterShutdown'] = trace.getActiveSpan();
      root.end();
    });
    assert.equal(seen['afterShutdown'], rootSpan, 'the caller of shutdown() keeps its span');
    assert.equal(await pendingAfterShutdown, rootSpan, 'a pending continuation keeps its span across shutdown');
    // After shutdown, contexts still propagate.
    await tracer.startActiveSpan('late', async (late) => {
      await Promise.resolve();
      assert.equal(trace.getActiveSpan(), late);
      late.end();
    });
    assert.ok(sf.stats().contextSwitches > 0, 'the binding was used');
  } finally {
    await sf.shutdown();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** The AsyncLocalStorage @datadog/pprof's wall profiler reads (it must be running). */
function samplerKey(): AsyncLocalStorage<unknown> | undefined {
  const proto = AsyncLocalStorage.prototype as { run: (...a: unknown[]) => unknown };
  const run = proto.run;
  const entered: AsyncLocalStorage<unknown>[] = [];
  proto.run = function (this: AsyncLocalStorage<unknown>, ...a: unknown[]): unknown {
    entered.push(this);
    return run.apply(this, a);
  };
  try {
    time.runWithContext({}, () => {});
  } finally {
    proto.run = run;
  }
  return entered[0];
}

/**
 * Instrumentations enter a request's Context again from every bound
 * listener. Each entry is a frame of the sampler's key; its native holder is
 * made once per Context and reused, and a Context that differs (another
 * span, or the same span with another value) gets its own.
 */
test('entering the same Context again reuses its sampler holder; other Contexts get their own; a new sampler run makes new ones', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-holder-'));
  const tracer = trace.getTracer('holder-test');
  const a = tracer.startSpan('a');
  const b = tracer.startSpan('b');
  const ctxA = trace.setSpan(ROOT_CONTEXT, a);
  const k = createContextKey('holder-test');
  const ctxA2 = ctxA.setValue(k, 'v');
  const ctxB = trace.setSpan(ROOT_CONTEXT, b);
  const enter = (ctx: typeof ctxA, key: AsyncLocalStorage<unknown> | undefined): unknown =>
    context.with(ctx, () => {
      // What the native sampler would label a sample taken now with.
      const held = resolveSample(time.getContext());
      assert.equal(held.spanId, trace.getSpan(ctx)?.spanContext().spanId);
      assert.equal(context.active(), ctx, 'active() is the Context entered');
      return key?.getStore();
    });
  const firstHolders: unknown[] = [];
  for (let run = 0; run < 2; run++) {
    const sf = start({ outputDir: dir, spansFile: false, windowMs: 600_000 });
    assert.ok(sf);
    try {
      const key = sf.mode === 'async-context-frame' ? samplerKey() : undefined;
      const first = enter(ctxA, key);
      // A holder entered again from a timer (a bound listener would do the same).
      const again = await new Promise((r) => setTimeout(() => r(enter(ctxA, key)), 1));
      const third = enter(ctxA, key);
      const sameSpanOtherValue = enter(ctxA2, key);
      const otherSpan = enter(ctxB, key);
      context.with(ctxA2, () => assert.equal(context.active().getValue(k), 'v'));
      if (key !== undefined) {
        assert.ok(first !== undefined && typeof first === 'object', 'the frame holds a holder');
        assert.equal(again, first, 'the same Context reuses its holder');
        assert.equal(third, first);
        assert.notEqual(sameSpanOtherValue, first, 'another Context of the same span has its own holder');
        assert.notEqual(otherSpan, first);
        assert.equal((first as { 0?: unknown })[0], ctxA, 'the holder carries its Context');
        // A holder belongs to one run of the native profiler.
        if (run === 1) assert.notEqual(first, firstHolders[0], 'a new sampler run does not reuse the last run\'s holder');
        firstHolders.push(first);
      }
    } finally {
      await sf.shutdown();
    }
  }
  a.end();
  b.end();
  rmSync(dir, { recursive: true, force: true });
});

test('span names on samples: recorded at end for our processors, read live for spans nobody noted', () => {
  const local = new LocalRootProcessor();
  const ours = new BasicTracerProvider({ spanProcessors: [local] }).getTracer('ours');
  const a = ours.startSpan('GET');
  const sa = sampleOfSpan(a);
  assert.equal(sa.name, 'GET');
  a.updateName('GET /users/:id');
  a.end();
  assert.equal(sampleName(sa), 'GET /users/:id', 'final name recorded at end');
  assert.equal('span' in sa, false, 'no span reference in a noted SampleContext');

  const theirs = new BasicTracerProvider().getTracer('theirs');
  const b = theirs.startSpan('GET');
  const sb = sampleOfSpan(b);
  b.updateName('GET /items/:id');
  b.end();
  assert.equal(sampleName(sb), 'GET /items/:id', 'current name of a live span nobody noted');
  assert.equal(resolveSample(trace.setSpan(ROOT_CONTEXT, b)), sb, 'a Context resolves to its span\'s SampleContext');
  assert.equal(resolveSample(b), sb);
  assert.equal(resolveSample(ROOT_CONTEXT).spanId, '', 'no span: NO_SPAN');
});

test('thread-context records keep their own ids when many are made (ids parsed into reused scratch bytes)', (t) => {
  const pub = new ThreadContextPublisher();
  if (!pub.supported) {
    t.skip(`thread context unsupported here: ${pub.reason ?? ''}`);
    return;
  }
  const a = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1 };
  const b = { traceId: 'FFEEDDCCBBAA99887766554433221100', spanId: '0123456789abcdef', traceFlags: 0 };
  const ra = pub.contextFor(a, 'a', a.spanId);
  const rb = pub.contextFor(b, 'b', a.spanId);
  assert.ok(ra && rb);
  assert.equal(Buffer.from(ra.debugBytes().subarray(0, 24)).toString('hex'), a.traceId + a.spanId);
  assert.equal(Buffer.from(rb.debugBytes().subarray(0, 24)).toString('hex'), b.traceId.toLowerCase() + b.spanId);
  assert.equal(pub.contextFor(a), ra, 'one record per span');
});
