import { CLIENT_JS } from './client.js';
import type { FlameDocument } from './document.js';
import { ms } from './flame.js';

const CSS = `
body{font:13px system-ui,-apple-system,Segoe UI,sans-serif;margin:0;color:#222;background:#fafafa}
header{padding:10px 14px;background:#fff;border-bottom:1px solid #ddd;position:sticky;top:0;z-index:2}
h1{font-size:16px;margin:0 0 4px}
.details{color:#555;margin:0}
.controls{margin-top:6px;display:flex;gap:10px;align-items:center;flex-wrap:wrap}
#search{width:260px;padding:3px 6px}
#status,#zoom{color:#7b1fa2}
main{padding:8px 14px}
#chart{width:100%;overflow:hidden}
canvas{display:block;cursor:pointer}
#tip{position:absolute;display:none;background:#fff;border:1px solid #999;padding:6px 8px;box-shadow:0 2px 6px rgba(0,0,0,.2);max-width:520px;pointer-events:none;z-index:3;font-size:12px}
#tip table{border-collapse:collapse;margin:4px 0}#tip td,#tip th{padding:0 8px 0 0;text-align:right}#tip td:first-child{text-align:left}
.file{color:#666;word-break:break-all}
footer{color:#888;padding:6px 14px;font-size:11px}
#growth{border-collapse:collapse;margin:12px 0;font-size:12px}#growth td,#growth th{padding:2px 10px;border-bottom:1px solid #eee;text-align:right}
#growth td.name,#growth th.name{text-align:left}#growth tr{cursor:pointer}#growth tr.only-tail td.name{color:#c62828;font-weight:bold}
.legend span{display:inline-block;width:12px;height:12px;margin:0 3px -2px 8px}
`;

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

/** JSON that cannot close the script element it sits in. */
function scriptJson(v: unknown): string {
  return JSON.stringify(v).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

/** One self-contained HTML page: no network, no external script or style. */
export function renderHtml(doc: FlameDocument): string {
  const metricOptions = ['samples', 'wall', 'cpu', 'offcpu']
    .map((m) => `<option value="${m}">${m === 'offcpu' ? 'off-CPU' : m === 'cpu' ? 'CPU' : m}</option>`)
    .join('');
  const legend =
    doc.kind === 'diff'
      ? `<span class="legend">colour:<span style="background:rgb(198,40,40)"></span>only tail spans run it<span style="background:rgb(255,120,90)"></span>larger share of a tail span<span style="background:rgb(235,235,235)"></span>same share<span style="background:rgb(80,140,255)"></span>smaller share</span>`
      : '';
  const unit = doc.metric === 'samples' ? (v: number): string => v.toFixed(2) : ms;
  const table =
    doc.growth === undefined
      ? ''
      : `<h2 style="font-size:14px">Frames that grow most in the tail (self ${escapeHtml(doc.metric)} per span)</h2>
<table id="growth"><thead><tr><th class="name">function</th><th>tail self / span</th><th>normal self / span</th><th>growth</th><th>tail total / span</th><th></th></tr></thead><tbody>
${doc.growth
  .map(
    (g) =>
      `<tr class="${g.onlyInTail ? 'only-tail' : 'grows'}" data-name="${escapeHtml(g.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))}"><td class="name" title="${escapeHtml(g.file)}">${escapeHtml(g.name)}</td><td>${unit(g.tail)}</td><td>${unit(g.normal)}</td><td>+${unit(g.tail - g.normal)}</td><td>${unit(g.tailTotal)}</td><td>${g.onlyInTail ? 'only in tail' : g.normal > 0 ? `x${(g.tail / g.normal).toFixed(1)}` : ''}</td></tr>`,
  )
  .join('\n')}
</tbody></table>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(doc.kind === 'diff' ? doc.title : `flamegraph: ${doc.title}`)}</title>
<style>${CSS}</style></head>
<body>
<header>
<h1 id="title">${escapeHtml(doc.kind === 'diff' ? doc.title : `flamegraph: ${doc.title}`)}</h1>
${doc.details.map((d) => `<p class="details">${escapeHtml(d)}</p>`).join('\n')}
<div class="controls">
<input id="search" type="search" placeholder="search functions (regex)" aria-label="search functions">
<label>widths <select id="metric">${metricOptions}</select></label>
<button id="reset" type="button">reset zoom</button>${legend}
<span id="status"></span> <span id="zoom"></span>
</div>
</header>
<main>
<div id="chart"><canvas id="flame"></canvas></div>
${table}
</main>
<div id="tip"></div>
<footer>spanfuse flamegraph. Click a frame to zoom, Esc to reset, hover for details. <span id="rendered"></span></footer>
<script type="application/json" id="flame-data">${scriptJson(doc)}</script>
<script>${CLIENT_JS}</script>
</body></html>
`;
}
