import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRetryAfter, RetryingTransport, DEFAULT_RETRY, Lane } from '../../src/export/index.js';
import type { Transport, TransportResult } from '../../src/export/index.js';

/** A transport that answers from a script, recording each attempt. */
function scripted(results: TransportResult[]): Transport & { attempts: number } {
  const t = {
    attempts: 0,
    send(): Promise<TransportResult> {
      const r = results[t.attempts] ?? results[results.length - 1]!;
      t.attempts++;
      return Promise.resolve(r);
    },
    close(): void {},
  };
  return t;
}

// Backoff sleeps are unref'd timers, as in a host; keep this test process alive.
const keepAlive = setInterval(() => undefined, 1000);
after(() => clearInterval(keepAlive));

const retryable: TransportResult = { kind: 'retryable', reason: 'ECONNREFUSED' };

void test('backoff grows by the multiplier with equal jitter, capped; Retry-After replaces it', async () => {
  const waits: number[] = [];
  const inner = scripted([retryable, retryable, retryable, retryable, { kind: 'retryable', reason: '503', retryAfterMs: 7 }, { kind: 'success' }]);
  const policy = { ...DEFAULT_RETRY, initialBackoffMs: 4, maxBackoffMs: 16, multiplier: 2, maxAttempts: 10 };
  // random() = 1: the jittered wait is the full backoff; = 0 would be half of it.
  const t = new RetryingTransport(inner, policy, (_r, w) => waits.push(w), () => 1);
  const r = await t.send({ body: new Uint8Array(1) }, 100);
  assert.equal(r.kind, 'success');
  assert.deepEqual(waits, [4, 8, 16, 16, 7]);
  const half: number[] = [];
  await new RetryingTransport(scripted([retryable, retryable, { kind: 'success' }]), policy, (_r, w) => half.push(w), () => 0).send({ body: new Uint8Array(1) }, 100);
  assert.deepEqual(half, [2, 4]);
});

void test('gives up after maxAttempts or when the next wait would pass maxElapsed; failures are not retried', async () => {
  const a = scripted([retryable]);
  const r1 = await new RetryingTransport(a, { ...DEFAULT_RETRY, initialBackoffMs: 1, maxAttempts: 3 }).send({ body: new Uint8Array(1) }, 10);
  assert.equal(r1.kind, 'retryable');
  assert.equal(a.attempts, 3);
  const b = scripted([retryable]);
  await new RetryingTransport(b, { ...DEFAULT_RETRY, initialBackoffMs: 50, maxElapsedMs: 10 }).send({ body: new Uint8Array(1) }, 10);
  assert.equal(b.attempts, 1);
  const c = scripted([{ kind: 'failure', reason: 'HTTP 400' }]);
  await new RetryingTransport(c, DEFAULT_RETRY).send({ body: new Uint8Array(1) }, 10);
  assert.equal(c.attempts, 1);
});

void test('an abort ends the backoff sleep at once', async () => {
  const ac = new AbortController();
  const inner = scripted([retryable]);
  const t = new RetryingTransport(inner, { ...DEFAULT_RETRY, initialBackoffMs: 3_600_000, maxElapsedMs: 86_400_000 }, () => ac.abort());
  const r = await t.send({ body: new Uint8Array(1) }, 10, ac.signal);
  assert.equal(r.kind, 'retryable');
  assert.equal(inner.attempts, 1);
});

void test('Retry-After as seconds or HTTP date', () => {
  const now = Date.parse('2026-11-29T12:00:00Z');
  assert.equal(parseRetryAfter('3', now), 3000);
  assert.equal(parseRetryAfter('Sun, 29 Nov 2026 12:00:10 GMT', now), 10_000);
  assert.equal(parseRetryAfter('Sun, 29 Nov 2026 11:00:00 GMT', now), 0);
  assert.equal(parseRetryAfter('soon', now), undefined);
  assert.equal(parseRetryAfter(undefined, now), undefined);
});

void test('lane: bounded by items and bytes, drops oldest, refuses oversize, keeps order', async () => {
  const handled: number[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const lane = new Lane<number>({ maxItems: 3, maxBytes: 100 }, async (n) => {
    await gate;
    handled.push(n);
    return { kind: 'success' };
  });
  const outcomes = [lane.enqueue(0, 10), lane.enqueue(1, 40), lane.enqueue(2, 40), lane.enqueue(3, 40), lane.enqueue(4, 200)];
  // 0 is being handled; 1 was dropped to fit 3 within 100 bytes; 4 is too big.
  assert.ok(lane.bytes <= 100);
  release();
  const kinds = (await Promise.all(outcomes)).map((o) => o.kind);
  assert.deepEqual(kinds, ['success', 'failure', 'success', 'success', 'failure']);
  assert.deepEqual(handled, [0, 2, 3]);
  assert.equal(lane.stats().dropped, 2);
  assert.ok(lane.stats().highWaterBytes <= 100);
});
