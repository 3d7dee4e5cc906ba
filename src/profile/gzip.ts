import { isMainThread } from 'node:worker_threads';
import { crc32, gzip as zlibGzip, gzipSync as zlibGzipSync } from 'node:zlib';
import { util } from '../core/builtins.js';

const { promisify } = util;

const zlibGzipAsync = promisify(zlibGzip);

/**
 * Gzip for the thread this runs on. The main thread uses node:zlib. Worker
 * threads never create a zlib handle: a worker can be terminated at any
 * moment, and on Node 20 a termination that lands between a zlib handle's
 * creation and its init aborts the whole process during the worker's
 * cleanup (`CompressionStream::Close() ... Assertion failed: init_done_ &&
 * "close before init"` in node_zlib.cc, seen in CI's mass-terminate run). In
 * a worker the output is a valid gzip member of *stored* (uncompressed)
 * deflate blocks, built in plain JavaScript (zlib's `crc32` is a plain
 * function, no handle): every gzip reader accepts it, and a worker's files
 * are larger (pprof compresses about 3-5x).
 */
export function gzipSyncForThread(data: Uint8Array): Buffer {
  return isMainThread ? zlibGzipSync(data) : storedGzip(data);
}

/** See {@link gzipSyncForThread}; asynchronous on the main thread. */
export function gzipForThread(data: Uint8Array): Promise<Buffer> {
  return isMainThread ? zlibGzipAsync(data) : Promise.resolve(storedGzip(data));
}

/** Largest payload of one stored deflate block (RFC 1951, 3.2.4). */
const STORED_MAX = 0xffff;

/** A gzip member (RFC 1952) holding `data` in stored deflate blocks. */
export function storedGzip(data: Uint8Array): Buffer {
  const blocks = Math.max(1, Math.ceil(data.length / STORED_MAX));
  const out = Buffer.allocUnsafe(10 + blocks * 5 + data.length + 8);
  // ID1 ID2, CM=8 (deflate), FLG=0, MTIME=0, XFL=0, OS=255 (unknown).
  out.set([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff], 0);
  let o = 10;
  for (let b = 0; b < blocks; b++) {
    const start = b * STORED_MAX;
    const len = Math.min(STORED_MAX, data.length - start);
    out[o] = b === blocks - 1 ? 1 : 0; // BFINAL on the last, BTYPE=00 (stored)
    out.writeUInt16LE(len, o + 1);
    out.writeUInt16LE(~len & 0xffff, o + 3);
    out.set(data.subarray(start, start + len), o + 5);
    o += 5 + len;
  }
  out.writeUInt32LE(crc32(data), o);
  out.writeUInt32LE(data.length >>> 0, o + 4);
  return out;
}
