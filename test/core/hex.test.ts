import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { hexInto, hexTail32 } from '../../src/core/hex.js';

test('hexInto: the same bytes as Buffer.from(hex), refusing what is not hex', () => {
  for (let i = 0; i < 200; i++) {
    const bytes = randomBytes(16);
    const out = new Uint8Array(20);
    assert.equal(hexInto(out, bytes.toString('hex'), 2, true), true);
    assert.deepEqual(Buffer.from(out.subarray(2, 18)), bytes);
    assert.equal(out[0], 0, 'nothing written before `at`');
    assert.equal(out[18], 0, 'nothing written past the digits');
  }
  const out = new Uint8Array(8);
  assert.equal(hexInto(out, 'ABCDEF0123456789', 0), true, 'upper case is read by default');
  assert.deepEqual(Buffer.from(out), Buffer.from('abcdef0123456789', 'hex'));
  assert.equal(hexInto(out, 'ABCDEF0123456789', 0, true), false, 'lowerOnly refuses upper case');
  assert.equal(hexInto(out, 'abc', 0), false, 'odd length');
  assert.equal(hexInto(out, '0123456789abcdeg', 0), false, 'a char that is not a digit');
  assert.equal(hexInto(out, '01234567\u{1F600}', 0), false, 'a char beyond ASCII');
});

test('hexTail32: the last 8 digits as parseInt reads them, NaN for anything else', () => {
  for (let i = 0; i < 500; i++) {
    const id = randomBytes(16).toString('hex');
    assert.equal(hexTail32(id), Number.parseInt(id.slice(-8), 16));
    const upper = id.toUpperCase();
    assert.equal(hexTail32(upper), Number.parseInt(upper.slice(-8), 16));
  }
  assert.equal(hexTail32('ffffffff'), 0xffffffff);
  assert.ok(Number.isNaN(hexTail32('abc')), 'fewer than 8 digits');
  assert.ok(Number.isNaN(hexTail32('0123456789abcdez')), 'not hex');
});
