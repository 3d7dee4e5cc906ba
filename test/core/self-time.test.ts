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

void test("each window says how long spanfuse's own sliced work took on its thread; stats() has the total", async (t) => {
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
  try {
    for (let i = 0; i < 60 && sf.stats().windows.collected < 4; i++) {
      burn(20);
      await sleep(10);
    }
    windows = sf.stats().windows.collected;
  } finally {
    await sf.shutdown();
  }
  assert.ok(windows >= 4, `${windows} windows`);
  const self = sf.stats().selfTime;
  assert.ok(self.slices > 0, JSON.stringify(self));
  assert.ok(self.slicedMs > 0, JSON.stringify(self));

  // One figure per window: a window's profiles (one per sample type) share it.
  const byWindow = new Map<string, number>();
  for (const f of readdirSync(dir).filter((n) => n.includes('.otlp'))) {
    const raw = readFileSync(join(dir, f));
    const req = decodeRequest(f.endsWith('.gz') ? gunzipSync(raw) : raw);
    const d = req.dictionary;
    for (const rp of req.resource_profiles) {
      for (const sp of rp.scope_profiles) {
        for (const p of sp.profiles) {
          for (const ai of p.attribute_indices) {
            const a = d.attribute_table[ai];
            if (d.string_table[a?.key_strindex ?? 0] === 'profiler.self.sliced_ms') byWindow.set(p.profile_id.toString('hex'), Number(anyValueText(a?.value)));
          }
        }
      }
    }
  }
  const figures = [...byWindow.values()];
  assert.ok(figures.length >= windows, `${figures.length} figures for ${windows} windows`);
  for (const v of figures) assert.ok(Number.isFinite(v) && v >= 0, String(v));
  // Windows after the first carry the previous ones' builds: not all zero,
  // and together no more than the running total.
  assert.ok(figures.some((v) => v > 0), figures.join(','));
  const sum = figures.reduce((a, b) => a + b, 0);
  assert.ok(sum <= self.slicedMs + 0.1 * figures.length, `${sum} > ${self.slicedMs}`);
});
