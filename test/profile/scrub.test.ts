import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Scrubber, looksRandom, luhn, REDACTED } from '../../src/profile/index.js';
import type { ScrubConfig } from '../../src/profile/index.js';
import { handProfile, makeWindow, newSpan } from './fixtures.js';

const config: ScrubConfig = {
  denyKeys: ['pin'],
  allowKeys: ['session.count'],
  rules: [/ACME-\d{6}/g],
  appRoot: '/home/alice/projects/shop',
  userNames: ['alice'],
};

void test('deny-listed keys are redacted whatever their spelling; allow-listed keys are kept', () => {
  const s = new Scrubber(config);
  for (const k of ['password', 'DB_PASSWORD', 'x-api-key', 'apiKey', 'api_key', 'Authorization', 'cookie', 'session.id', 'client_secret', 'private_key', 'aws.credential', 'user.pin']) {
    assert.ok(s.isDeniedKey(k), k);
  }
  for (const k of ['span_name', 'thread.name', 'thread.id', 'http.route', 'className', 'session.count']) {
    assert.ok(!s.isDeniedKey(k), k);
  }
});

void test('free text: queries cut, secrets and cards redacted, identifiers and routes kept', () => {
  const s = new Scrubber(config);
  assert.equal(s.scrubText('GET /search?q=shoes&token=abc'), 'GET /search');
  assert.equal(s.scrubText('GET /api/v1/users/:id'), 'GET /api/v1/users/:id');
  assert.equal(s.scrubText('processTicksAndRejections'), 'processTicksAndRejections');
  assert.equal(s.scrubText('XMLHttpRequestEventTargetHandler2'), 'XMLHttpRequestEventTargetHandler2');
  assert.equal(s.scrubText('node:internal/process/task_queues'), 'node:internal/process/task_queues');
  assert.equal(s.scrubText('pay 4111 1111 1111 1111 now'), `pay ${REDACTED} now`);
  assert.equal(s.scrubText('order 4111 1111 1111 1112'), 'order 4111 1111 1111 1112', 'fails Luhn: not a card');
  assert.equal(s.scrubText('mail bob@example.com'), `mail ${REDACTED}`);
  assert.equal(s.scrubText("WHERE password = 'p@ss'"), `WHERE password = ${REDACTED}`);
  assert.equal(s.scrubText('code ACME-123456'), `code ${REDACTED}`);
  assert.equal(s.scrubText('/home/alice/projects/shop/src/a.js'), 'src/a.js');
  assert.equal(s.scrubText('/home/alice/.nvm/x.js'), '~/.nvm/x.js');
  assert.equal(s.scrubText('/opt/alice/bin/node'), '/opt/<user>/bin/node');
  assert.equal(s.scrubText('file:///home/alice/projects/shop/src/m.mjs?v=1'), 'src/m.mjs');
  assert.ok(luhn('4111111111111111') && !luhn('4111111111111112'));
  assert.ok(looksRandom('dGhpcyBpcyBhIHNlY3JldCBrZXkgdmFsdWU') && !looksRandom('handleUserPaymentRequestV2Async'));
});

void test('ids by contract survive; a malformed id is scrubbed like any value', () => {
  const span = newSpan('GET /x');
  const wall = handProfile(
    [['sample', 'count']],
    [
      { stack: [{ name: 'f', file: '/home/alice/projects/shop/f.js', line: 1 }], values: [1], labels: { ...span } },
      { stack: [{ name: 'g', file: 'g.js', line: 1 }], values: [1], labels: { trace_id: 'user=carol@example.com' } },
    ],
  );
  const out = new Scrubber(config).scrubProfile(wall);
  const strings = out.stringTable.strings;
  assert.ok(strings.includes(span.trace_id) && strings.includes(span.span_id) && strings.includes('01'));
  assert.ok(!strings.some((x) => x.includes('carol')));
  assert.ok(strings.includes('f.js'));
  // The input is untouched.
  assert.ok(wall.stringTable.strings.includes('/home/alice/projects/shop/f.js'));
});

void test('the scrubbed copy shares what scrubbing left as it was, and its table keeps no replaced or unreferenced text', () => {
  const span = newSpan('GET /cart');
  const wall = handProfile(
    [['sample', 'count']],
    [
      { stack: [{ name: 'f', file: 'f.js', line: 1 }], values: [1], labels: { ...span } },
      { stack: [{ name: 'g', file: 'g.js', line: 1 }], values: [2], labels: { ...span, note: 'mail bob@example.com' } },
    ],
  );
  // A string nothing refers to (left behind by an earlier stage) must not reach the output either.
  wall.stringTable.dedup('orphan dave@example.com');
  const out = new Scrubber(config).scrubProfile(wall);
  assert.equal(out.sample[0], wall.sample[0], 'a sample with nothing to scrub is the same object');
  assert.notEqual(out.sample[1], wall.sample[1]);
  assert.equal(out.sample[1]!.label[0], wall.sample[1]!.label[0], 'an unchanged label is the same object');
  assert.equal(out.function[0], wall.function[0]);
  const strings = out.stringTable.strings;
  assert.ok(!strings.some((x) => x.includes('bob@') || x.includes('dave@')), strings.join('|'));
  const note = out.sample[1]!.label.find((l) => strings[Number(l.key)] === 'note');
  assert.equal(strings[Number(note?.str)], `mail ${REDACTED}`);
  // Indices of unchanged strings are the same in both tables.
  for (const l of out.sample[0]!.label) assert.equal(strings[Number(l.str)], wall.stringTable.strings[Number(l.str)]);
  // The original keeps its text.
  assert.ok(wall.stringTable.strings.includes('mail bob@example.com'));
});

void test('a scrubbed window keeps samples, values and tail spans; counts redactions', () => {
  const span = newSpan('GET /reset?token=zz9');
  const wall = handProfile(
    [['wall', 'nanoseconds']],
    [{ stack: [{ name: 'h', file: '/home/alice/projects/shop/h.js', line: 2 }], values: [7], labels: { ...span, password: 'pw1', end_timestamp_ns: 5n } }],
  );
  const w = makeWindow(wall, 0n, 10n, {
    attributes: { 'deploy.token': 'dtok-1', mode: 'async-hooks' },
    tailSpans: [{ spanId: span.span_id, traceId: span.trace_id, operation: 'GET /reset?token=zz9 (SERVER)', quantile: 'p99', thresholdMs: 5, durationMs: 9 }],
  });
  const s = new Scrubber(config);
  const out = s.scrub(w);
  assert.equal(out.wall.sample.length, 1);
  assert.deepEqual(out.wall.sample[0]!.value, [7]);
  const labels = Object.fromEntries(
    out.wall.sample[0]!.label.map((l) => [out.wall.stringTable.strings[Number(l.key)], l.str ? out.wall.stringTable.strings[Number(l.str)] : l.num]),
  );
  assert.equal(labels['password'], REDACTED);
  assert.equal(labels['span_name'], 'GET /reset');
  assert.equal(labels['end_timestamp_ns'], 5n);
  assert.equal(out.attributes['deploy.token'], REDACTED);
  assert.equal(out.attributes['mode'], 'async-hooks');
  assert.equal(out.tailSpans[0]!.operation, 'GET /reset (SERVER)');
  const st = s.stats();
  assert.ok((st['redactions'] ?? 0) >= 4);
  assert.ok((st['redactions.key'] ?? 0) >= 2);
  assert.ok((st['redactions.query'] ?? 0) >= 2);
  assert.equal(st['windows'], 1);
});

void test('text made once per window (comments, window attributes) is scrubbed but not kept in the memo', () => {
  const s = new Scrubber(config);
  const windowOf = (i: number) => {
    const wall = handProfile(
      [['wall', 'nanoseconds']],
      [{ stack: [{ name: 'handler', file: '/srv/app/h.js', line: 2 }], values: [7], labels: { ...newSpan('GET /orders') } }],
    );
    wall.comment = [wall.stringTable.dedup(`profiler.context_loss.top_function.0=runWithContext samples=${i} mail bob@example.com`)];
    return makeWindow(wall, 0n, 10n, { attributes: { 'runtime.note': `window ${i} of bob@example.com` } });
  };
  s.scrub(windowOf(0));
  const settled = s.memoSize;
  assert.ok(settled > 0, 'names and labels are kept');
  for (let i = 1; i <= 50; i++) {
    const out = s.scrub(windowOf(i));
    const comment = out.wall.stringTable.strings[Number(out.wall.comment[0])] ?? '';
    assert.ok(comment.includes(`samples=${i}`), comment);
    assert.ok(!comment.includes('bob@example.com'), comment);
    assert.ok(!String(out.attributes['runtime.note']).includes('bob@example.com'));
  }
  // Each window has a fresh span id label; those are id-shaped and not scrubbed as text.
  assert.equal(s.memoSize, settled);
  // Both redactions are counted in every window.
  assert.equal(s.stats()['redactions.email'] ?? s.stats()['redactions.rule'], 2 * 51);
});

void test('scrubbing the same text again gives the same result and counts its redactions again (memo)', () => {
  const s = new Scrubber(config);
  const text = 'GET /pay?card=1 for bob@example.com code ACME-123456';
  const first = s.scrubText(text);
  const once = s.stats();
  assert.equal(once['redactions.query'], 1);
  assert.equal(once['redactions.email'] ?? once['redactions.rule'], 1);
  const second = s.scrubText(text);
  assert.equal(second, first);
  const twice = s.stats();
  assert.equal(twice['redactions'], 2 * (once['redactions'] ?? 0));
  for (const [k, v] of Object.entries(once)) if (k.startsWith('redactions.')) assert.equal(twice[k], 2 * v, k);
  // Clean text counts nothing, however often it is seen.
  for (let i = 0; i < 3; i++) assert.equal(s.scrubText('processTicksAndRejections'), 'processTicksAndRejections');
  assert.equal(s.stats()['redactions'], twice['redactions']);
  // Past the memo's size the results stay the same (the memo is emptied, not wrong).
  for (let i = 0; i < 10_000; i++) s.scrubText(`fn${i}`);
  assert.equal(s.scrubText(text), first);
  assert.equal(s.stats()['redactions'], 3 * (once['redactions'] ?? 0));
  // Long text is not kept, and is scrubbed (and counted) the same each time.
  const long = `${'x'.repeat(600)} bob@example.com`;
  const r1 = s.scrubText(long);
  const r2 = s.scrubText(long);
  assert.equal(r2, r1);
  assert.ok(!r1.includes('bob@example.com'));
  assert.equal(s.stats()['redactions'], 3 * (once['redactions'] ?? 0) + 2);
});
