import { join } from 'node:path';
import { diffDocument, flameDocument, FlameError, loadInputs, renderHtml, spanOperation } from '../debug/index.js';
import type { Loaded } from '../debug/index.js';
import { writeOutput } from './flame-common.js';

/**
 * The demo's closing pages: the flamegraph of its slowest span (with
 * samples) and the tail-vs-normal diff of its slowest operation (the one
 * whose tail spans are slowest on average), written next to the profiles.
 * Returns the lines to print; a page that cannot be drawn says why.
 */
export function writeDemoFlamegraphs(dir: string, sinceMs: number): string {
  let loaded: Loaded;
  try {
    loaded = loadInputs([dir], { sinceMs });
  } catch (err) {
    return `flamegraphs: none (${err instanceof Error ? err.message : String(err)})`;
  }
  const lines: string[] = ['flamegraphs (open in a browser):'];
  const sampled = new Set(loaded.store.rows.map((r) => r.spanId));
  const spans = loaded.spans.filter((s) => sampled.has(s.spanId)).sort((a, b) => b.endNs - b.startNs - (a.endNs - a.startNs));
  const slowest = spans[0];
  if (slowest === undefined) lines.push('  slowest span with samples: none');
  else {
    const path = writeOutput(join(dir, 'flame-slowest-span.html'), renderHtml(flameDocument(loaded, { spanId: slowest.spanId }, 'wall')));
    lines.push(`  slowest span with samples   ${slowest.spanId} ${slowest.name} ${((slowest.endNs - slowest.startNs) / 1e6).toFixed(1)} ms: ${path}`);
  }
  // Slowest operation: highest mean duration of its tail spans.
  const byOp = new Map<string, { sum: number; n: number }>();
  for (const s of loaded.spans) {
    if (s.attributes['profiler.tail'] !== true) continue;
    const op = spanOperation(s);
    const e = byOp.get(op) ?? { sum: 0, n: 0 };
    e.sum += s.endNs - s.startNs;
    e.n++;
    byOp.set(op, e);
  }
  const ops = [...byOp.entries()].sort((a, b) => b[1].sum / b[1].n - a[1].sum / a[1].n);
  let drawn = false;
  for (const [op, e] of ops) {
    try {
      const path = writeOutput(join(dir, 'diff-slowest-operation.html'), renderHtml(diffDocument(loaded, op, 'wall')));
      lines.push(`  slowest operation ${op} (${e.n} tail spans, mean ${(e.sum / e.n / 1e6).toFixed(1)} ms), tail vs normal: ${path}`);
      drawn = true;
      break;
    } catch (err) {
      // No samples of its tail or of its normal spans: try the next one.
      if (!(err instanceof FlameError)) throw err;
    }
  }
  if (!drawn) lines.push('  tail vs normal: no operation has samples of both tail and normal spans');
  return lines.join('\n');
}
