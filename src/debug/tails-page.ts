import type { WindowProfile } from '../core/window.js';

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

/** The recent tail spans of the windows in memory, newest first, each linking to its flamegraph. */
export function tailsPage(windows: readonly WindowProfile[], keep: string, limit = 200): string {
  const rows: string[] = [];
  const ops = new Set<string>();
  const extra = keep === '' ? '' : `&${keep}`;
  for (let i = windows.length - 1; i >= 0 && rows.length < limit; i--) {
    const w = windows[i]!;
    for (let k = w.tailSpans.length - 1; k >= 0 && rows.length < limit; k--) {
      const t = w.tailSpans[k]!;
      ops.add(t.operation);
      const ended = new Date(Number(w.endUnixNs / 1_000_000n)).toISOString();
      rows.push(
        `<tr><td><a href="/debug/flame?span=${encodeURIComponent(t.spanId)}${extra}">${esc(t.spanId)}</a></td><td>${esc(t.operation)}</td><td>${esc(t.quantile)}</td><td>${t.durationMs.toFixed(1)} ms</td><td>${t.thresholdMs.toFixed(1)} ms</td><td>${esc(t.traceId)}</td><td>${esc(w.profileId)}</td><td>${ended}</td></tr>`,
      );
    }
  }
  const diffs = [...ops].map((o) => `<li><a href="/debug/diff?operation=${encodeURIComponent(o)}${extra}">${esc(o)}</a></li>`).join('');
  return `<!doctype html><html><head><meta charset="utf-8"><title>spanfuse: recent tail spans</title>
<style>body{font:13px system-ui,sans-serif;margin:16px}td,th{padding:2px 10px;border-bottom:1px solid #eee;text-align:left}</style></head><body>
<h1 style="font-size:17px">Recent tail spans (${rows.length}, from the last ${windows.length} windows in memory)</h1>
${rows.length === 0 ? '<p>No tail span in the windows held in memory yet.</p>' : `<table id="tails"><thead><tr><th>span (flamegraph)</th><th>operation</th><th>rule</th><th>duration</th><th>threshold</th><th>trace</th><th>window profile id</th><th>window end</th></tr></thead><tbody>${rows.join('\n')}</tbody></table>`}
${diffs === '' ? '' : `<h2 style="font-size:15px">Tail vs normal per operation</h2><ul>${diffs}</ul>`}
</body></html>`;
}
