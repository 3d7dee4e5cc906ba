/**
 * The page's script: a small canvas renderer for the flat preorder tree of
 * document.ts. It lays the tree out once per metric (O(nodes)), draws only
 * frames at least half a pixel wide (a subtree narrower than that is skipped
 * whole, so a 10^5-node tree draws a few thousand rectangles), and keeps the
 * drawn rectangles for hover, click and tests (window.__flame).
 * Plain ES2017, no dependencies; kept as a string so the page is one file.
 */
export const CLIENT_JS = String.raw`
(function () {
  'use strict';
  var doc = JSON.parse(document.getElementById('flame-data').textContent);
  var T = doc.tree, N = T.frame.length, isDiff = doc.kind === 'diff';
  var METRICS = ['samples', 'wall', 'cpu', 'offcpu'];
  var metric = Math.max(0, METRICS.indexOf(doc.metric));
  var ROW = 18, FONT = '12px ui-monospace, Menlo, Consolas, monospace';
  var canvas = document.getElementById('flame'), ctx = canvas.getContext('2d');
  var tip = document.getElementById('tip'), status = document.getElementById('status');
  var zoomLabel = document.getElementById('zoom');
  var X = new Float64Array(N), maxDepth = 0, focus = 0, matched = null, drawn = [], byDepth = [];
  var charW = 7.2, width = 0;
  for (var i = 0; i < N; i++) if (T.depth[i] > maxDepth) maxDepth = T.depth[i];

  function V() { return T.values[metric]; }
  function layout() {
    var v = V(), next = new Float64Array(maxDepth + 2);
    for (var i = 0; i < N; i++) {
      var d = T.depth[i];
      X[i] = d === 0 ? 0 : next[d];
      next[d] = X[i] + v[i];
      next[d + 1] = X[i];
    }
  }
  function hash(s) { var h = 2166136261; for (var i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); } return h >>> 0; }
  var colorCache = {};
  function warm(name) {
    var c = colorCache[name];
    if (c) return c;
    if (name.charAt(0) === '(' || name === 'all') c = 'rgb(190,190,190)';
    else { var h = hash(name); c = 'rgb(' + (205 + (h % 50)) + ',' + (80 + ((h >>> 8) % 140)) + ',' + (30 + ((h >>> 16) % 40)) + ')'; }
    colorCache[name] = c;
    return c;
  }
  // Per span, a tail span is longer than a normal one everywhere; what the
  // tail does differently is a frame taking a larger share of its span.
  function ratio(i) {
    var t = T.values[metric][i], n = T.values[4 + metric][i], t0 = T.values[metric][0], n0 = T.values[4 + metric][0];
    if (t0 <= 0 || n0 <= 0) return 1;
    if (n <= 0) return t > 0 ? Infinity : 1;
    return (t / t0) / (n / n0);
  }
  function diffKind(i) {
    if (T.values[4][i] === 0 && T.values[metric][i] > 0) return 'new';
    var r = ratio(i);
    return r > 1.1 ? 'grows' : r < 1 / 1.1 ? 'shrinks' : 'same';
  }
  function diffColor(i) {
    var k = diffKind(i);
    if (k === 'new') return 'rgb(198,40,40)';
    var r = ratio(i), a = Math.min(1, Math.abs(Math.log2(r)) / 2);
    if (r >= 1) return 'rgb(255,' + Math.round(235 - 160 * a) + ',' + Math.round(235 - 180 * a) + ')';
    return 'rgb(' + Math.round(235 - 180 * a) + ',' + Math.round(235 - 120 * a) + ',255)';
  }

  function resize() {
    var dpr = window.devicePixelRatio || 1;
    width = canvas.parentElement.clientWidth;
    var h = (maxDepth + 1) * ROW;
    canvas.style.width = width + 'px'; canvas.style.height = h + 'px';
    canvas.width = Math.round(width * dpr); canvas.height = Math.round(h * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.font = FONT;
    charW = ctx.measureText('mmmmmmmmmm').width / 10;
  }

  function draw() {
    var v = V(), lo = X[focus], span = v[focus] || 1, scale = width / span;
    ctx.clearRect(0, 0, width, canvas.height);
    ctx.font = FONT; ctx.textBaseline = 'middle';
    drawn = []; byDepth = [];
    for (var d = 0; d <= maxDepth; d++) byDepth.push([]);
    var i = 0;
    while (i < N) {
      var w = v[i] * scale, x0 = (X[i] - lo) * scale;
      if (v[i] <= 0 || w < 0.5 || x0 >= width || x0 + w <= 0) { i = T.end[i]; continue; }
      var x = Math.max(0, x0), ww = Math.min(width, x0 + w) - x, y = T.depth[i] * ROW;
      var name = doc.names[T.frame[i]];
      var isMatch = matched !== null && matched[i] === 1;
      var kind = isDiff ? diffKind(i) : 'frame';
      ctx.fillStyle = isMatch ? 'rgb(224,64,251)' : isDiff ? diffColor(i) : warm(name);
      ctx.fillRect(x, y, Math.max(ww - 0.5, 0.5), ROW - 1);
      if (ww > 24) {
        var max = Math.floor((ww - 6) / charW), label = name;
        if (label.length > max) label = max > 1 ? label.slice(0, max - 1) + '\u2026' : '';
        ctx.fillStyle = isMatch || kind === 'new' ? '#fff' : '#000';
        ctx.fillText(label, x + 3, y + ROW / 2);
      }
      var rec = { node: i, name: name, x: x, y: y, w: ww, h: ROW - 1, matched: isMatch, kind: kind };
      drawn.push(rec); byDepth[T.depth[i]].push(rec);
      i++;
    }
    zoomLabel.textContent = focus === 0 ? '' : 'zoomed on ' + doc.names[T.frame[focus]] + ' (click "all" or press Esc to reset)';
  }

  function at(ev) {
    var r = canvas.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
    var row = byDepth[Math.floor(y / ROW)];
    if (!row) return null;
    for (var k = 0; k < row.length; k++) if (x >= row[k].x && x < row[k].x + row[k].w) return row[k];
    return null;
  }
  function fmtNs(ns) { return ns >= 1e9 ? (ns / 1e9).toFixed(2) + ' s' : (ns / 1e6).toFixed(ns >= 1e8 ? 0 : 1) + ' ms'; }
  function fmt(m, v) { return m === 0 ? (Number.isInteger(v) ? String(v) : v.toFixed(2)) : fmtNs(v); }
  function self(s, i) { var v = T.values[s], t = v[i]; for (var c = i + 1; c < T.end[i]; c = T.end[c]) t -= v[c]; return Math.max(0, t); }
  function pct(a, b) { return b > 0 ? (100 * a / b).toFixed(1) + '%' : '-'; }
  function esc(s) { return String(s).replace(/[&<>"]/g, function (c) { return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]; }); }
  var LABELS = ['samples', 'wall', 'CPU', 'off-CPU'];
  function tipHtml(i) {
    var f = T.frame[i], h = '<b>' + esc(doc.names[f]) + '</b>' + (doc.files[f] ? '<br><span class=file>' + esc(doc.files[f]) + '</span>' : '');
    var v = T.values[metric];
    h += '<br>' + pct(v[i], v[0]) + ' of all, ' + pct(v[i], v[focus]) + ' of the zoomed frame (' + LABELS[metric] + ')';
    h += '<table><tr><th></th><th>' + (isDiff ? 'tail/span' : 'total') + '</th><th>' + (isDiff ? 'normal/span' : 'self') + '</th></tr>';
    for (var m = 0; m < 4; m++) {
      if ((m === 2 || m === 3) && !doc.hasCpu) { h += '<tr><td>' + LABELS[m] + '</td><td colspan=2>not collected</td></tr>'; continue; }
      if (isDiff) h += '<tr><td>' + LABELS[m] + '</td><td>' + fmt(m, T.values[m][i]) + '</td><td>' + fmt(m, T.values[4 + m][i]) + '</td></tr>';
      else h += '<tr><td>' + LABELS[m] + '</td><td>' + fmt(m, T.values[m][i]) + '</td><td>' + fmt(m, self(m, i)) + '</td></tr>';
    }
    h += '</table>';
    if (isDiff) {
      var k = diffKind(i);
      var r = ratio(i);
      h += k === 'new' ? '<b>only tail spans run it</b>' : (k === 'grows' ? 'larger' : k === 'shrinks' ? 'smaller' : 'about the same') + ' share of a tail span than of a normal one' + (isFinite(r) ? ' (x' + r.toFixed(2) + ')' : '');
    } else if (doc.hasCpu && T.values[1][i] > 0) h += 'on CPU ' + pct(T.values[2][i], T.values[1][i]) + ' of its wall time';
    return h;
  }
  canvas.addEventListener('mousemove', function (ev) {
    var r = at(ev);
    if (!r) { tip.style.display = 'none'; return; }
    tip.innerHTML = tipHtml(r.node);
    tip.style.display = 'block';
    var tx = Math.min(ev.clientX + 12, window.innerWidth - tip.offsetWidth - 8);
    tip.style.left = Math.max(0, tx) + 'px'; tip.style.top = (ev.clientY + window.scrollY + 14) + 'px';
  });
  canvas.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
  canvas.addEventListener('click', function (ev) { var r = at(ev); if (r) zoom(r.node); });
  document.addEventListener('keydown', function (ev) { if (ev.key === 'Escape') zoom(0); });
  document.getElementById('reset').addEventListener('click', function () { zoom(0); });
  function zoom(i) { focus = i; draw(); }

  var search = document.getElementById('search');
  function runSearch() {
    var q = search.value.trim();
    if (q === '') { matched = null; status.textContent = ''; draw(); return; }
    var re;
    try { re = new RegExp(q, 'i'); } catch (e) { re = { test: function (s) { return s.toLowerCase().indexOf(q.toLowerCase()) >= 0; } }; }
    var hitFrame = new Uint8Array(doc.names.length);
    for (var f = 1; f < doc.names.length; f++) if (re.test(doc.names[f])) hitFrame[f] = 1;
    matched = new Uint8Array(N);
    var v = V(), sum = 0, frames = 0, seen = {};
    for (var i = 0; i < N; i++) if (hitFrame[T.frame[i]]) { matched[i] = 1; if (!seen[T.frame[i]]) { seen[T.frame[i]] = 1; frames++; } }
    for (var j = 1; j < N;) { if (matched[j]) { sum += v[j]; j = T.end[j]; } else j++; }
    status.textContent = frames === 0 ? 'no frame matches ' + q : frames + ' function' + (frames === 1 ? '' : 's') + ' matched, ' + pct(sum, v[0]) + ' of ' + LABELS[metric];
    draw();
  }
  search.addEventListener('input', runSearch);
  var pick = document.getElementById('metric');
  pick.value = METRICS[metric];
  pick.addEventListener('change', function () { metric = METRICS.indexOf(pick.value); layout(); if (search.value) runSearch(); else draw(); });
  var rows = document.querySelectorAll('#growth tbody tr');
  for (var r = 0; r < rows.length; r++) rows[r].addEventListener('click', function () { search.value = this.getAttribute('data-name'); runSearch(); });
  window.addEventListener('resize', function () { resize(); draw(); });

  resize(); layout(); draw();
  var renderMs = performance.now();
  document.getElementById('rendered').textContent = N + ' nodes, drawn ' + drawn.length + ' frames; page ready ' + Math.round(renderMs) + ' ms after navigation start';
  window.__flame = {
    renderMs: renderMs,
    nodes: N,
    drawn: function () { return drawn.map(function (d) { return { name: d.name, x: d.x, y: d.y, w: d.w, h: d.h, matched: d.matched, kind: d.kind }; }); },
    focus: function () { return focus === 0 ? null : doc.names[T.frame[focus]]; },
    canvasBox: function () { var b = canvas.getBoundingClientRect(); return { x: b.left, y: b.top, w: b.width, h: b.height }; }
  };
})();
`;
