import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { busyAt, InFlightSpans } from '../../src/context-loss/index.js';
import type { ContextLossStats } from '../../src/context-loss/index.js';
import { fixture, lastJsonLine, runNode } from '../support/child.js';
import { readPprof, wallFiles } from '../support/pprof.js';

const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

async function queueRun(wrap: boolean): Promise<{ stats: ContextLossStats; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-ctxloss-'));
  const r = await runNode(['--import', 'spanfuse/register', fixture('worker-detached-queue-app')], {
    SPANFUSE_OUTPUT_DIR: dir,
    SPANFUSE_SAMPLING_INTERVAL_US: '1000',
    SPANFUSE_WINDOW_MS: '600000',
    WRAP: wrap ? '1' : '0',
  }, 120_000);
  assert.equal(r.code, 0, r.stderr);
  return { stats: lastJsonLine<ContextLossStats>(r.stdout), dir };
}

test('a custom queue that drops context shows in the context-loss figure with its function; bindToContext brings it near zero', async () => {
  const detached = await queueRun(false);
  const s = detached.stats;
  assert.ok(s.inFlightSamples >= 100, `too few samples to judge: ${JSON.stringify(s)}`);
  assert.ok(s.share >= 0.5, `detached share ${s.share}`);
  assert.equal(s.topFunctions[0]?.name, 'detached_queue_work', JSON.stringify(s.topFunctions));
  assert.ok((s.topFunctions[0]?.share ?? 0) >= 0.5);
  assert.match(s.lastWindow?.topStacks[0]?.stack ?? '', /^detached_queue_work < job/);

  // The same figures travel with the window: pprof comments ...
  const comments = wallFiles(detached.dir).flatMap((f) => {
    const p = readPprof(f).profile;
    return p.comment.map((i) => p.stringTable.strings[Number(i)] ?? '');
  });
  assert.ok(comments.some((c) => c.startsWith('profiler.context_loss.share=')), comments.join('\n'));
  assert.ok(comments.some((c) => c.startsWith('profiler.context_loss.top_function.0=detached_queue_work ')), comments.join('\n'));
  // ... and `spanfuse summary --json` reads them back.
  const summary = await runNode([CLI, 'summary', detached.dir, '--json']);
  assert.equal(summary.code, 0, summary.stderr);
  const parsed = JSON.parse(summary.stdout) as { unattributed: { share: number; topFunctions: Array<{ name: string; samples: number; share: number }> } };
  assert.equal(parsed.unattributed.topFunctions[0]?.name, 'detached_queue_work');
  const topFn = parsed.unattributed.topFunctions[0];
  assert.ok(topFn !== undefined && topFn.samples > 0 && topFn.share >= 0.5);
  assert.ok(Math.abs(parsed.unattributed.share - s.share) < 0.01, `${parsed.unattributed.share} vs ${s.share}`);
  const text = await runNode([CLI, 'summary', detached.dir]);
  assert.match(text.stdout, /context lost[^\n]*\n[^\n]*detached_queue_work/);

  const wrapped = (await queueRun(true)).stats;
  assert.ok(wrapped.inFlightSamples >= 100, JSON.stringify(wrapped));
  assert.ok(wrapped.share <= 0.1, `wrapped share ${wrapped.share}`);
  assert.ok(!wrapped.topFunctions.some((f) => f.name === 'detached_queue_work' && f.share > 0.2), JSON.stringify(wrapped.topFunctions));
});

test('in-flight spans: transitions only when the count leaves or returns to zero, and state at any time', () => {
  const t = new InFlightSpans();
  const span = {} as never;
  const before = performance.timeOrigin + performance.now();
  t.onStart(span, {} as never);
  t.onStart(span, {} as never);
  t.onEnd(span);
  const mid = performance.timeOrigin + performance.now() + 0.001;
  t.onEnd(span);
  t.onEnd(span); // an end without a start (span begun before) is ignored
  const first = t.take();
  assert.equal(first.transitions.length, 2);
  assert.equal(first.busyAtStart, false);
  assert.equal(busyAt(first, before - 1), false);
  assert.equal(busyAt(first, (first.transitions[0] ?? 0) + 0.0001), true);
  assert.ok(mid <= (first.transitions[1] ?? 0) || busyAt(first, mid) === false);
  assert.equal(busyAt(first, (first.transitions[1] ?? 0) + 1), false);
  // A span open across the window boundary: the next window starts busy.
  t.onStart(span, {} as never);
  t.take();
  const second = t.take();
  assert.equal(second.busyAtStart, true);
  assert.equal(second.transitions.length, 0);
  assert.equal(busyAt(second, 0), true);
});
