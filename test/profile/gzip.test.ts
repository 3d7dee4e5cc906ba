import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import * as zlib from 'node:zlib';
import { gzipSyncForThread, storedGzip } from '../../src/profile/gzip.js';

/** BTYPE of the first deflate block of a gzip member without optional header fields. */
const firstBlockType = (gz: Uint8Array): number => ((gz[10] ?? 0) >> 1) & 3;

test('stored gzip round-trips through zlib at every block boundary', () => {
  for (const n of [0, 1, 65_534, 65_535, 65_536, 131_070, 131_071, 200_000]) {
    const data = randomBytes(n);
    const gz = storedGzip(data);
    assert.equal(firstBlockType(gz), 0, `stored blocks (n=${n})`);
    assert.ok(zlib.gunzipSync(gz).equals(data), `round trip n=${n}`);
  }
});

test('the gzip trailer carries the standard CRC-32 and the length', () => {
  const gz = storedGzip(Buffer.from('123456789'));
  assert.equal(gz.readUInt32LE(gz.length - 8), 0xcbf43926);
  assert.equal(gz.readUInt32LE(gz.length - 4), 9);
});

test('the main thread compresses with zlib; a worker thread writes stored gzip (no zlib handle)', async () => {
  const text = Buffer.from('spanfuse '.repeat(20_000));
  const main = gzipSyncForThread(text);
  assert.notEqual(firstBlockType(main), 0, 'zlib compresses on the main thread');
  assert.ok(main.length < text.length / 10);
  assert.ok(zlib.gunzipSync(main).equals(text));

  const url = new URL('../../src/profile/gzip.js', import.meta.url).href;
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     import(workerData.url).then((m) => parentPort.postMessage(m.gzipSyncForThread(Buffer.from(workerData.text))));`,
    { eval: true, workerData: { url, text: text.toString() } },
  );
  const fromWorker = await new Promise<Uint8Array>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  await worker.terminate();
  const gz = Buffer.from(fromWorker);
  assert.equal(firstBlockType(gz), 0, 'stored blocks in the worker');
  assert.ok(zlib.gunzipSync(gz).equals(text));
});
