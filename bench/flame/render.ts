// How long a flamegraph of a large selection takes: building the page from
// window files (CLI side, in this process) and rendering it in headless
// Chromium (time from navigation start until the first frame is drawn, as
// the page reports it in window.__flame.renderMs). Synthetic spanfuse-like
// windows: 100 windows, 10^5 samples, with stacks that share their paths
// (branching 2) and a worst case where nearly every path is unique (6).
//   node dist/bench/flame/render.js [--chromium /usr/bin/chromium] [--rounds 3]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { flameDocument, loadInputs, renderHtml } from '../../src/debug/index.js';
import { writeSyntheticWindows } from '../../test/debug/synthetic.js';

const { values } = parseArgs({ options: { chromium: { type: 'string' }, rounds: { type: 'string' } } });
const rounds = Number(values.rounds ?? '3');
const median = (a: number[]): number => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)] ?? NaN;

console.log(`load average ${(await import('node:os')).loadavg().map((x) => x.toFixed(1)).join(' ')} on ${(await import('node:os')).cpus().length} cores`);
const browser = await chromium.launch({ executablePath: values.chromium ?? '/usr/bin/chromium' });
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
const root = mkdtempSync(join(tmpdir(), 'spanfuse-flame-bench-'));
try {
  for (const branching of [2, 6]) {
    const dir = join(root, `b${branching}`);
    writeSyntheticWindows(dir, { windows: 100, samples: 100_000, branching });
    const build: number[] = [];
    const buildCpu: number[] = [];
    const render: number[] = [];
    let html = '';
    let nodes = 0;
    for (let r = 0; r < rounds; r++) {
      const t = performance.now();
      const cpu = process.cpuUsage();
      html = renderHtml(flameDocument(loadInputs([dir]), {}, 'wall'));
      build.push(performance.now() - t);
      const used = process.cpuUsage(cpu);
      buildCpu.push((used.user + used.system) / 1000);
      const file = join(root, `b${branching}.html`);
      writeFileSync(file, html);
      await page.goto(`file://${file}`);
      await page.waitForFunction(() => (globalThis as { __flame?: unknown }).__flame !== undefined, null, { timeout: 60_000 });
      const m = await page.evaluate(() => {
        const f = (globalThis as unknown as { __flame: { renderMs: number; nodes: number } }).__flame;
        return { renderMs: f.renderMs, nodes: f.nodes };
      });
      render.push(m.renderMs);
      nodes = m.nodes;
    }
    console.log(
      `branching ${branching}: 100 windows, 100000 samples, ${nodes} tree nodes, page ${(html.length / 1e6).toFixed(1)} MB; ` +
        `build (read+aggregate+HTML) median ${median(build).toFixed(0)} ms wall, ${median(buildCpu).toFixed(0)} ms CPU; browser ready (parse+layout+first draw) median ${median(render).toFixed(0)} ms ` +
        `[${render.map((x) => x.toFixed(0)).join(', ')}]`,
    );
  }
} finally {
  await browser.close();
  rmSync(root, { recursive: true, force: true });
}
