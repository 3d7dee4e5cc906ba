import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { lastJsonLine, runNode } from '../support/child.js';

// Importing a built-in as an ES module runs its lazy getters: on Node 24,
// node:http's WebSocket/CloseEvent/MessageEvent load all of undici (+14 MB
// RSS). spanfuse loads node:http, node:fs and node:util through require()
// (src/core/builtins.ts), so a CommonJS app that never asks for undici does
// not get it from the preload, with the file and OTLP exporters set up.
test('the preload and a started exporter load no undici (the ESM facade of node:http would, on Node 24)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-footprint-'));
  const app = `setTimeout(() => console.log(JSON.stringify({ undici: process.moduleLoadList.filter((m) => /undici/.test(m)) })), 300);`;
  const r = await runNode(['--import', 'spanfuse/register', '-e', app], {
    SPANFUSE_OUTPUT_DIR: dir,
    SPANFUSE_EXPORTERS: 'file,otlp',
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
  });
  assert.equal(r.code, 0, r.stderr);
  const out = lastJsonLine<{ undici: string[] }>(r.stdout);
  assert.deepEqual(out.undici, []);
  // The check can fail: the same app importing node:http as an ES module gets undici on Node 24.
  if (Number(process.versions.node.split('.')[0]) >= 24) {
    const esm = await runNode(['--input-type=module', '-e', `await import('node:http'); ${app}`]);
    assert.ok((JSON.parse(esm.stdout.trim()) as { undici: string[] }).undici.length > 0, esm.stdout);
  }
});
