/**
 * Native stops build their chunk's string table without UTF-8 bytes
 * (withoutStringBytes in src/core/pprof.ts): the window assembled from the
 * chunks still encodes to a pprof whose strings decode back, and pprof-format
 * tables made elsewhere still encode their bytes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Profile, StringTable, withoutStringBytes } from '../../src/core/pprof.js';
import { encodePprofSync } from '../../src/profile/index.js';
import { spin, testSampler } from '../support/sampler.js';

test('inside a stop a new table keeps its strings without their bytes; outside, tables encode as before', () => {
  const inside = withoutStringBytes(() => {
    const t = new StringTable();
    t.dedup('function_name_of_some_length');
    return t;
  });
  assert.deepEqual(inside.strings, ['', 'function_name_of_some_length']);
  assert.equal(inside.encodedLength, 0, 'every string of it, the empty one included, is a placeholder');
  const outside = new StringTable();
  outside.dedup('function_name_of_some_length');
  assert.ok(outside.encodedLength > 28, 'a table made after the stop encodes its strings');
  assert.throws(() => withoutStringBytes(() => {
    throw new Error('stop failed');
  }));
  const again = new StringTable();
  again.dedup('x');
  assert.equal(again.encodedLength, 2 + 3, 'the encoder is back after a stop that threw');
});

test('a window built from native chunks encodes to a pprof whose strings decode back', () => {
  const sampler = testSampler({ windowMs: 1000, chunkSamples: 20 });
  sampler.start();
  let window;
  try {
    assert.ok(Number.isInteger(spin(150)));
    window = sampler.rotate(true);
  } finally {
    sampler.rotate(false);
  }
  assert.ok(window !== undefined && window.wall.sample.length > 0);
  const decoded = Profile.decode(encodePprofSync(window.wall));
  assert.deepEqual(decoded.stringTable.strings, window.wall.stringTable.strings);
  assert.ok(decoded.stringTable.strings.some((s) => s.includes('chunk-strings.test')), 'the test file is among the frames');
});
