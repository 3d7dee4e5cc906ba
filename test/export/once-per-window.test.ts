import { test } from 'node:test';
import assert from 'node:assert/strict';
import { oncePerWindow } from '../../src/export/factory.js';
import { encodeOtlpRequestAsync, profileResource } from '../../src/profile/index.js';
import { handProfile, makeWindow, newSpan } from '../profile/fixtures.js';

test('oncePerWindow: one OTLP encoding per window, shared by every caller; another window is encoded anew', async () => {
  const span = newSpan('GET /one');
  const frame = { name: 'work', file: '/srv/app.js', line: 3 };
  const window = (): ReturnType<typeof makeWindow> =>
    makeWindow(handProfile([['wall', 'nanoseconds']], [{ stack: [frame], values: [10_000_000], labels: { ...span } }]), 1_000_000_000n, 2_000_000_000n);
  const options = { resource: profileResource('svc', {}), scopeName: 'spanfuse', scopeVersion: 'test' };
  let encodes = 0;
  const encode = oncePerWindow((w) => {
    encodes++;
    return encodeOtlpRequestAsync(w, options);
  });
  const a = window();
  const [x, y] = await Promise.all([encode(a), encode(a)]);
  assert.equal(encodes, 1);
  assert.equal(x, y, 'the same bytes object');
  assert.deepEqual(x, await encodeOtlpRequestAsync(a, options), 'what encoding it alone gives');
  await encode(window());
  assert.equal(encodes, 2);
});
