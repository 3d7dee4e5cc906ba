import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fixture, runNode } from '../support/child.js';
import { readPprof, wallFiles } from '../support/pprof.js';

const tmp = (): string => mkdtempSync(join(tmpdir(), 'spanfuse-life-'));

// These tests judge labels, not sampling rates: a few samples of the burn are
// enough, and a busy machine can leave a 300 ms burn with only a dozen.
const MIN_SAMPLES = 5;

/** Samples whose stack holds `frame`, by their span_id label ('' = none). */
function samplesIn(dir: string, frame: string): Map<string, number> {
  const bySpan = new Map<string, number>();
  for (const f of wallFiles(dir)) {
    for (const s of readPprof(f).samples) {
      if (!s.frames.includes(frame)) continue;
      const id = String(s.labels['span_id'] ?? '');
      bySpan.set(id, (bySpan.get(id) ?? 0) + (s.values[0] ?? 0));
    }
  }
  return bySpan;
}

function spansOf(dir: string): Array<Record<string, unknown>> {
  const p = join(dir, 'spans.jsonl');
  if (!existsSync(p)) return [];
  return readFileSync(p, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

test('--require spanfuse/register profiles a CommonJS app and provides a tracer', async () => {
  const dir = tmp();
  const r = await runNode(['--require', 'spanfuse/register', fixture('preload-cjs').replace(/\.js$/, '.cjs')], {
    SPANFUSE_OUTPUT_DIR: dir,
    SPANFUSE_SAMPLING_INTERVAL_US: '1000',
  });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim()) as { running: boolean; provider: string };
  assert.equal(out.running, true);
  assert.equal(out.provider, 'spanfuse');
  const spans = spansOf(dir);
  assert.equal(spans.length, 1);
  const span = spans[0]!;
  assert.equal(span['name'], 'cjs-span');
  for (const k of ['traceId', 'spanId', 'kind', 'startTimeUnixNano', 'endTimeUnixNano', 'attributes', 'status']) {
    assert.ok(k in span, `spans.jsonl line lacks ${k}`);
  }
  const bySpan = samplesIn(dir, 'preload_burn');
  assert.ok((bySpan.get(String(span['spanId'])) ?? 0) >= MIN_SAMPLES, `burn samples by span: ${JSON.stringify([...bySpan])}`);
  assert.equal(bySpan.get('') ?? 0, 0, 'burn samples without the span label');
});

test('an app that registers its own tracer provider after the preload keeps its spans labelled', async () => {
  const dir = tmp();
  const r = await runNode(['--import', 'spanfuse/register', fixture('own-provider-app')], {
    SPANFUSE_OUTPUT_DIR: dir,
    SPANFUSE_SAMPLING_INTERVAL_US: '1000',
  });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim()) as { registered: boolean; provider: string; exported: string[]; ids: string[] };
  assert.equal(out.registered, true, 'the app could not register its provider');
  assert.equal(out.provider, 'app');
  assert.deepEqual([...out.exported].sort(), [...out.ids].sort(), 'the app exporter did not get its spans');
  assert.equal(spansOf(dir).length, 0, 'spans.jsonl must stay empty when the app exports spans itself');
  const child = out.ids[1]!;
  const root = out.ids[0]!;
  const bySpan = samplesIn(dir, 'own_provider_burn');
  assert.ok((bySpan.get(child) ?? 0) >= MIN_SAMPLES, `burn samples by span: ${JSON.stringify([...bySpan])}`);
  assert.deepEqual([...bySpan.keys()], [child], 'burn samples without (or with another) span');
  // The child's samples name the root as local root.
  let rootLabelled = 0;
  for (const f of wallFiles(dir)) {
    for (const s of readPprof(f).samples) {
      if (s.labels['span_id'] === child && s.labels['local_root_span_id'] === root) rootLabelled += s.values[0] ?? 0;
    }
  }
  assert.ok(rootLabelled >= MIN_SAMPLES, 'local_root_span_id is not the root span');
});

test('process.exit() right after a span still writes the window and the span', async () => {
  const dir = tmp();
  const r = await runNode(['--import', 'spanfuse/register', fixture('exit-app')], {
    SPANFUSE_OUTPUT_DIR: dir,
    SPANFUSE_SAMPLING_INTERVAL_US: '1000',
  });
  assert.equal(r.code, 0, r.stderr);
  const spanId = r.stdout.trim();
  assert.deepEqual(
    spansOf(dir).map((s) => s['spanId']),
    [spanId],
  );
  const burn = samplesIn(dir, 'exit_burn');
  assert.ok((burn.get(spanId) ?? 0) >= MIN_SAMPLES, `exit_burn samples by span: ${JSON.stringify([...burn])}`);
  assert.deepEqual([...burn.keys()], [spanId], 'exit_burn samples without (or with another) span');
});

test('an idle app exits on its own (timers unref-ed) and leaves its window', async () => {
  const dir = tmp();
  const r = await runNode(['--import', 'spanfuse/register', fixture('idle-app')], { SPANFUSE_OUTPUT_DIR: dir }, 30_000);
  assert.equal(r.signal, null, 'killed: the process did not exit by itself');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(wallFiles(dir).length, 1);
});

test('bad environment: one clear error naming every field, and the app still runs', async () => {
  const dir = tmp();
  const r = await runNode(['--import', 'spanfuse/register', fixture('idle-app')], {
    SPANFUSE_OUTPUT_DIR: dir,
    SPANFUSE_WINDOW_MS: 'abc',
    SPANFUSE_SAMPLING_INTERVAL_US: '-5',
    SPANFUSE_ENABLED: 'maybe',
  });
  assert.equal(r.code, 0);
  assert.match(r.stdout, /idle app ran/);
  assert.match(r.stderr, /SPANFUSE_WINDOW_MS: expected a whole number .* got "abc"/);
  assert.match(r.stderr, /SPANFUSE_SAMPLING_INTERVAL_US: expected a whole number .* got "-5"/);
  assert.match(r.stderr, /SPANFUSE_ENABLED: expected true or false/);
  assert.equal((r.stderr.match(/invalid configuration/g) ?? []).length, 1, 'more than one error');
  assert.equal(existsSync(dir) && wallFiles(dir).length, 0);
});

test('SPANFUSE_ENABLED=false turns everything off', async () => {
  const dir = join(tmp(), 'never');
  const r = await runNode(['--import', 'spanfuse/register', fixture('idle-app')], {
    SPANFUSE_OUTPUT_DIR: dir,
    SPANFUSE_ENABLED: 'false',
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(existsSync(dir), false);
});

test('worker threads are profiled too: their samples carry their own span and OS thread id', async () => {
  const dir = tmp();
  const r = await runNode(['--import', 'spanfuse/register', fixture('worker-app')], {
    SPANFUSE_OUTPUT_DIR: dir,
    SPANFUSE_SAMPLING_INTERVAL_US: '1000',
  });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim()) as Record<'main' | 'worker', { spanId: string; tid: number }>;
  assert.notEqual(out.main.tid, out.worker.tid);
  const seen = { main: 0, worker: 0 };
  for (const f of wallFiles(dir)) {
    for (const s of readPprof(f).samples) {
      const n = s.values[0] ?? 0;
      for (const [who, frame] of [['main', 'main_thread_burn'], ['worker', 'worker_thread_burn']] as const) {
        if (!s.frames.includes(frame)) continue;
        assert.equal(s.labels['span_id'], out[who].spanId, `${frame} sample with the wrong span`);
        assert.equal(s.labels['thread.id'], String(out[who].tid), `${frame} sample with the wrong thread id`);
        if (who === 'worker') assert.notEqual(s.labels['thread.name'], 'main');
        seen[who] += n;
      }
    }
  }
  assert.ok(seen.main >= MIN_SAMPLES && seen.worker >= MIN_SAMPLES, `samples per thread: ${JSON.stringify(seen)}`);
});

test('out-of-process context: the active span is readable from the OTEP-4947 record (AsyncContextFrame runtimes)', async () => {
  const dir = tmp();
  const r = await runNode(['--import', 'spanfuse/register', fixture('thread-ctx-app')], {
    SPANFUSE_OUTPUT_DIR: dir,
    SPANFUSE_THREAD_CONTEXT: 'true',
  });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim()) as {
    traceId: string;
    spanId: string;
    bytes: string;
    otelCtxMapped: boolean;
    threadContext: string;
    mode: string;
  };
  assert.equal(out.otelCtxMapped, true, 'no OTEL_CTX mapping in /proc/self/maps');
  if (out.mode === 'async-context-frame') {
    assert.equal(out.threadContext, 'active');
    assert.ok(out.bytes.startsWith(out.traceId + out.spanId), `record ${out.bytes} does not start with the trace and span ids`);
  } else {
    // No AsyncContextFrame: honestly unsupported, with the reason.
    assert.match(out.threadContext, /AsyncContextFrame/);
    assert.equal(out.bytes, '');
  }
});

test('a tail span, end to end: marked, enriched, counters of its window, and its exemplar profile on disk', async () => {
  const dir = tmp();
  const r = await runNode(['--import', 'spanfuse/register', fixture('tail-app')], {
    SPANFUSE_OUTPUT_DIR: dir,
    SPANFUSE_SAMPLING_INTERVAL_US: '1000',
    SPANFUSE_TAIL_THRESHOLD_MS: '50',
  });
  assert.equal(r.code, 0, r.stderr);
  const [span] = spansOf(dir).filter((s) => s['name'] === 'slow-op');
  assert.ok(span, 'slow-op not in spans.jsonl');
  const a = span['attributes'] as Record<string, unknown>;
  assert.equal(a['profiler.tail'], true);
  assert.equal(a['profiler.tail.threshold_ms'], 50);
  assert.equal(a['pyroscope.profile.id'], span['spanId']);
  const exemplar = String(a['profiler.exemplar.id']);
  const file = wallFiles(dir).find((f) => f.includes(exemplar));
  assert.ok(file, `no profile ${exemplar} in ${dir}`);
  const own = readPprof(file).samples.filter((s) => s.labels['span_id'] === span['spanId']);
  assert.ok(own.some((s) => s.frames.includes('tail_burn')), 'the exemplar profile lacks the span\'s samples');
  // The profile knows its tails: every sample of the tail span says so.
  assert.ok(own.every((s) => s.labels['profiler.tail.operation'] === 'slow-op (INTERNAL)' && s.labels['profiler.tail.quantile'] === 'budget'),
    `tail labels: ${JSON.stringify(own.map((s) => [s.labels['profiler.tail.operation'], s.labels['profiler.tail.quantile']]).slice(0, 3))}`);
  assert.ok(Number(a['profiler.cpu.time_ns']) > 0);
  assert.ok(Number(a['profiler.offcpu.time_ns']) >= 50e6, `offcpu ${String(a['profiler.offcpu.time_ns'])} misses the 100 ms sleep`);
  // Window counters of the span's thread (tier 0 works everywhere on Linux).
  for (const k of ['profiler.ctx_switches.voluntary', 'profiler.ctx_switches.involuntary', 'profiler.page_faults', 'profiler.runqueue.delay_ns']) {
    assert.equal(typeof a[k], 'number', `${k} missing`);
  }
  // This VM has no PMU: hardware counters are absent, never zero.
  const pmu = existsSync('/sys/bus/event_source/devices/cpu');
  if (!pmu) {
    for (const k of ['profiler.cpu.cycles', 'profiler.instructions', 'profiler.l3.misses']) assert.equal(a[k], undefined, `${k} present without a PMU`);
    // ... and the profile says why.
    const p = readPprof(file).profile;
    const comments = p.comment.map((i) => p.stringTable.strings[Number(i)] ?? '');
    assert.ok(comments.some((c) => /^profiler\.unsupported\.l3\.misses=.+/.test(c)), `comments: ${JSON.stringify(comments)}`);
  }
});
