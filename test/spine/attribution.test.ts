import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fixture, runNode } from '../support/child.js';
import { readPprof, wallFiles } from '../support/pprof.js';

interface Tally {
  inRequest: number;
  right: number;
  wrongSpan: number;
  unlabelled: number;
  outside: number;
  outsideLabelled: number;
  leakedOutsideRequests: number;
}

/**
 * Ground truth comes from the stacks: a sample whose stack holds `req_<i>_*`
 * was taken while request i's code ran, so it must carry request i's span.
 */
async function attribution(execArgv: string[]): Promise<{ tally: Tally; mode: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-attr-'));
  const truthPath = join(dir, 'truth.json');
  const r = await runNode([...execArgv, '--import', 'spanfuse/register', fixture('attribution-app')], {
    SPANFUSE_OUTPUT_DIR: dir,
    SPANFUSE_SAMPLING_INTERVAL_US: '1000',
    SPANFUSE_WINDOW_MS: '600000',
    GROUND_TRUTH: truthPath,
    REQUESTS: '48',
  }, 120_000);
  assert.equal(r.code, 0, `fixture failed: ${r.stderr}`);
  const { truth } = JSON.parse(readFileSync(truthPath, 'utf8')) as {
    truth: Record<string, { traceId: string; spanId: string }>;
  };
  const files = wallFiles(dir);
  assert.ok(files.length >= 1, 'no profile written');
  const tally: Tally = { inRequest: 0, right: 0, wrongSpan: 0, unlabelled: 0, outside: 0, outsideLabelled: 0, leakedOutsideRequests: 0 };
  let mode = '';
  for (const f of files) {
    const p = readPprof(f);
    for (const s of p.samples) {
      const n = s.values[0] ?? 0;
      if (n === 0) continue;
      const req = s.frames.map((name) => /^req_(\d+)_\d+$/.exec(name)).find((m) => m !== null);
      const spanId = s.labels['span_id'];
      if (req) {
        const t = truth[req[1]!];
        assert.ok(t, `no ground truth for request ${req[1]}`);
        tally.inRequest += n;
        if (spanId === undefined) tally.unlabelled += n;
        else if (spanId === t.spanId && s.labels['trace_id'] === t.traceId) tally.right += n;
        else tally.wrongSpan += n;
      } else if (s.frames.includes('outside_span_work')) {
        tally.outside += n;
        if (spanId !== undefined) tally.outsideLabelled += n;
      }
      // Every span label must be a request span of the fixture.
      if (spanId !== undefined && !Object.values(truth).some((t) => t.spanId === spanId)) tally.leakedOutsideRequests += n;
    }
    const comments = p.profile.comment.map((i) => p.profile.stringTable.strings[Number(i)] ?? '');
    mode = comments.find((c) => c.startsWith('profiler.context.mode='))?.slice('profiler.context.mode='.length) ?? '';
  }
  return { tally, mode };
}

const acfFlag = process.allowedNodeEnvironmentFlags.has('--no-async-context-frame');

for (const variant of [
  { name: 'default runtime mode', execArgv: [] as string[] },
  ...(acfFlag ? [{ name: 'async-hooks fallback forced with --no-async-context-frame', execArgv: ['--no-async-context-frame'] }] : []),
]) {
  test(`attribution: request samples carry their own span (${variant.name})`, async () => {
    const { tally, mode } = await attribution(variant.execArgv);
    // Feature detection, not version sniffing, picks the mode; check it did.
    const hasFrames = acfFlag && variant.execArgv.length === 0;
    assert.equal(mode, hasFrames ? 'async-context-frame' : 'async-hooks');
    const share = tally.right / tally.inRequest;
    const detail = JSON.stringify(tally);
    assert.ok(tally.inRequest >= 150, `too few request samples to judge: ${detail}`);
    const floor = hasFrames ? 0.99 : 0.95;
    assert.ok(share >= floor, `only ${(share * 100).toFixed(2)}% labelled right (need ${floor * 100}%): ${detail}`);
    assert.ok(tally.outside >= 20, `too few samples outside spans to judge leaks: ${detail}`);
    assert.equal(tally.outsideLabelled, 0, `samples outside any span carry a span label: ${detail}`);
    assert.equal(tally.leakedOutsideRequests, 0, `span labels that belong to no request: ${detail}`);
    console.log(`# ${process.version} ${variant.name}: ${(share * 100).toFixed(2)}% right ${detail}`);
  });
}
