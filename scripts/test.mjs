#!/usr/bin/env node
// Runs every compiled `*.test.js` under dist/test with node's test runner,
// once per Node.js binary: the one that runs npm (the machine's, Node 20 here)
// and the Node 24 of the `node@24` devDependency. SPANFUSE_TEST_NODES=a,b
// picks the binaries instead. (Passing the folder instead would
// also run fixtures: node treats every .js file below a `test` folder as a
// test file.) Extra arguments are passed to `node --test` before the files;
// SPANFUSE_TEST_FILTER=substring narrows the files. Each Node.js binary's run
// gets a temporary directory of its own as TMPDIR (the tests and the children
// they start make their output directories there), removed when that run
// passes and kept, with its path printed, when it fails.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;
const base = join(root, 'dist', 'test');
const filter = process.env.SPANFUSE_TEST_FILTER ?? '';

// Only compiled tests whose TypeScript source still exists: a test deleted
// from test/ leaves its old .js in dist/ until a clean build.
function hasSource(js) {
  const rel = relative(base, js).replace(/\.js$/, '');
  return existsSync(join(root, 'test', `${rel}.ts`));
}

function walk(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...walk(p));
    else if (e.name.endsWith('.test.js') && p.includes(filter) && hasSource(p)) out.push(relative(root, p));
  }
  return out;
}

const files = walk(base).sort();
if (files.length === 0) {
  console.error(`no test files found under ${relative(root, base)} (filter: ${JSON.stringify(filter)}); run the build first`);
  process.exit(1);
}
function version(bin) {
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

const bundled = join(root, 'node_modules', 'node', 'bin', 'node');
const nodes = process.env.SPANFUSE_TEST_NODES
  ? process.env.SPANFUSE_TEST_NODES.split(',').filter(Boolean)
  : [process.env.npm_node_execpath || process.execPath, ...(existsSync(bundled) ? [bundled] : [])];

const seen = new Set();
const results = [];
for (const bin of nodes) {
  const v = version(bin);
  if (v === undefined) {
    console.error(`cannot run ${bin}`);
    results.push({ v: bin, ok: false });
    continue;
  }
  if (seen.has(v)) continue;
  seen.add(v);
  console.log(`\n=== node ${v} (${bin}): ${files.length} test files`);
  const tmp = mkdtempSync(join(tmpdir(), 'spanfuse-test-'));
  const r = spawnSync(bin, ['--test', '--test-concurrency=1', ...process.argv.slice(2), ...files], {
    cwd: root,
    stdio: 'inherit',
    // The suite looks up particular spans in spans.jsonl, so it has every
    // span written; test/spine/spans-file.test.ts checks the one-in-N default.
    env: { SPANFUSE_SPANS_ONE_IN: '1', ...process.env, TMPDIR: tmp },
  });
  const ok = r.status === 0;
  if (ok) rmSync(tmp, { recursive: true, force: true });
  else console.log(`node ${v}: the tests' temporary files are kept in ${tmp}`);
  results.push({ v, ok });
}
console.log('\n' + results.map((r) => `node ${r.v}: ${r.ok ? 'passed' : 'FAILED'}`).join('\n'));
process.exit(results.every((r) => r.ok) ? 0 : 1);
