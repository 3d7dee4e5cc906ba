import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { options } from '../../bench/args.js';
import { parseScavenges } from '../../bench/gc/nvp.js';

void test("parseScavenges reads this runtime's own --trace-gc-nvp lines, main isolate only", () => {
  // Three forced scavenges, with something kept alive across them, in a child of this same node.
  const script = [
    'const keep = [];',
    'for (let i = 0; i < 3; i++) {',
    '  for (let j = 0; j < 20000; j++) keep.push({ j });',
    "  globalThis.gc({ type: 'minor' });",
    '}',
    'console.log(keep.length);',
  ].join('\n');
  const out = execFileSync(process.execPath, ['--expose-gc', '--trace-gc-nvp', '-e', script], { encoding: 'utf8' });
  const list = parseScavenges(out);
  assert.ok(list.length >= 3, `expected at least the 3 forced scavenges, got ${list.length}:\n${out.slice(0, 2000)}`);
  for (const s of list) {
    assert.ok(Number.isFinite(s.atMs) && s.atMs >= 0);
    assert.ok(Number.isFinite(s.pauseMs) && s.pauseMs >= 0);
    assert.ok(Number.isFinite(s.survived) && Number.isFinite(s.promoted) && Number.isFinite(s.allocated));
  }
  // 60,000 small objects were alive at every forced scavenge: the later ones copied or promoted them.
  const kept = list.slice(-2).reduce((a, s) => a + s.survived + s.promoted, 0);
  assert.ok(kept > 500_000, `survived + promoted over the last two scavenges: ${kept} bytes`);
  // In time order, as the benches read it.
  for (let i = 1; i < list.length; i++) assert.ok(list[i]!.atMs >= list[i - 1]!.atMs);
});

void test('options collects every value of a repeatable flag, in order', () => {
  assert.deepEqual(options(['--node-arg', '--no-maglev', '--rounds', '3', '--node-arg', '--max-semi-space-size=8'], '--node-arg'), [
    '--no-maglev',
    '--max-semi-space-size=8',
  ]);
  assert.deepEqual(options(['--rounds', '3', '--node-arg'], '--node-arg'), []);
});
