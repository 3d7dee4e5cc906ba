import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { setTimeout as sleep } from 'node:timers/promises';
import { start } from '../../src/index.js';
import { anyValueText, decodeRequest } from '../profile/otlp-schema.js';

function burn(ms: number): number {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) x += Math.sqrt(x + 1);
  return x;
}

void test("each window says how long spanfuse's own periodic work took on its thread; stats() has the totals", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-self-time-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const sf = start({
    outputDir: dir,
    windowMs: 400,
    samplingIntervalMicros: 2000,
    spansFile: false,
    tracerProvider: 'off',
    export: { file: { formats: ['otlp'] } },
  });
  assert.ok(sf !== undefined, 'started');
  let windows = 0;
  let passesHere = false;
  try {
    for (let i = 0; i < 60 && sf.stats().windows.collected < 4; i++) {
      burn(20);
      await sleep(10);
    }
    windows = sf.stats().windows.collected;
    const ts = sf.stats().runtime?.threadState;
    passesHere = ts?.running === true && ts.host === 'main' && ts.passes > 0;
  } finally {
    await sf.shutdown();
  }
  assert.ok(windows >= 4, `${windows} windows`);
  const self = sf.stats().selfTime;
  assert.ok(self.slicedMs > 0, JSON.stringify(self));
  // Every close stops the native profiler.
  assert.ok(self.stopsMs > 0, JSON.stringify(self));
  // Thread-state passes on this thread (the default host, where /proc allows them) are timed; elsewhere none are.
  if (passesHere) assert.ok(self.passesMs > 0, JSON.stringify(self));
  else assert.equal(self.passesMs, 0);
  // The sliced work by stage: every window is assembled, scrubbed and
  // encoded; the stages' own times add up to no more than the sliced total.
  for (const stage of ['assemble', 'scrub', 'encode'] as const) {
    assert.ok((self.stagesMs[stage] ?? 0) > 0, `${stage}: ${JSON.stringify(self)}`);
  }
  const staged = Object.values(self.stagesMs).reduce((a, b) => a + b, 0);
  assert.ok(staged <= self.slicedMs + 0.5, `stages ${staged} ms > sliced ${self.slicedMs} ms`);
  // The longest single blocks: one slice and one stop, each no longer than
  // all of its kind together; the longest step of a stage likewise.
  assert.ok(self.longestMs.sliced > 0 && self.longestMs.sliced <= self.slicedMs, JSON.stringify(self));
  assert.ok(self.longestMs.stops > 0 && self.longestMs.stops <= self.stopsMs, JSON.stringify(self));
  if (passesHere) assert.ok(self.longestMs.passes > 0 && self.longestMs.passes <= self.passesMs, JSON.stringify(self));
  for (const stage of ['assemble', 'scrub', 'encode'] as const) {
    const longest = self.stagesLongestStepMs[stage] ?? 0;
    assert.ok(longest > 0 && longest <= (self.stagesMs[stage] ?? 0), `${stage}: ${JSON.stringify(self)}`);
  }

  // One set of figures per window: a window's profiles (one per sample type) share them.
  const byWindow = new Map<string, Record<string, number>>();
  for (const f of readdirSync(dir).filter((n) => n.includes('.otlp'))) {
    const raw = readFileSync(join(dir, f));
    const req = decodeRequest(f.endsWith('.gz') ? gunzipSync(raw) : raw);
    const d = req.dictionary;
    for (const rp of req.resource_profiles) {
      for (const sp of rp.scope_profiles) {
        for (const p of sp.profiles) {
          for (const ai of p.attribute_indices) {
            const a = d.attribute_table[ai];
            const key = d.string_table[a?.key_strindex ?? 0] ?? '';
            if (!key.startsWith('profiler.self.')) continue;
            const id = p.profile_id.toString('hex');
            const figures = byWindow.get(id) ?? {};
            figures[key] = Number(anyValueText(a?.value));
            byWindow.set(id, figures);
          }
        }
      }
    }
  }
  const windowsSeen = [...byWindow.values()];
  assert.ok(windowsSeen.length >= windows, `${windowsSeen.length} windows with figures for ${windows} windows`);
  for (const [key, total] of [
    ['profiler.self.sliced_ms', self.slicedMs],
    ['profiler.self.stops_ms', self.stopsMs],
  ] as const) {
    const figures = windowsSeen.map((f) => f[key] ?? Number.NaN);
    for (const v of figures) assert.ok(Number.isFinite(v) && v >= 0, `${key}: ${figures.join(',')}`);
    // Windows after the first carry the previous ones' work: not all zero,
    // and together no more than the running total.
    assert.ok(figures.some((v) => v > 0), `${key}: ${figures.join(',')}`);
    const sum = figures.reduce((a, b) => a + b, 0);
    assert.ok(sum <= total + 0.1 * figures.length, `${key}: ${sum} > ${total}`);
  }
});
