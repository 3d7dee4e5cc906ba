/**
 * A window assembled from packed native stops (its string table a
 * LazyStringTable, which keeps strings without their UTF-8 bytes) encodes
 * to a pprof whose strings decode back.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Profile } from '../../src/core/pprof.js';
import { encodePprofSync } from '../../src/profile/index.js';
import { spin, testSampler } from '../support/sampler.js';

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
