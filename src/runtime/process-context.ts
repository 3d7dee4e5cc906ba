import { describe } from '../core/diagnostics.js';
import { loadLibc } from './ffi.js';
import type { Mapping } from './ffi.js';
import { encodeProcessContext } from './proto.js';
import type { ContextValue } from './proto.js';
import { fs } from '../core/builtins.js';

const { closeSync, ftruncateSync } = fs;

/**
 * OTEP-4719 process context: a `/memfd:OTEL_CTX` mapping (or, where memfd is
 * refused, an anonymous one named with prctl) that out-of-process readers
 * find in /proc/<pid>/maps. Layout (little-endian):
 *   0  char[8] "OTEL_CTX"   (written last on first publication)
 *   8  u32 version = 2
 *  12  u32 payload_size
 *  16  u64 published_at_ns (Unix ns; 0 while an update is in progress)
 *  24  u64 payload pointer  (here: the mapping address + 32)
 *  32  payload: protobuf ProcessContext
 */
export const OTEL_CTX_SIGNATURE = 'OTEL_CTX';
export const OTEL_CTX_VERSION = 2;
export const OTEL_CTX_HEADER_BYTES = 32;
const MAX_PAYLOAD = 60 * 1024;
const MAPPING_BYTES = 64 * 1024;

const PROT_READ_WRITE = 3;
const MAP_SHARED = 0x01;
const MAP_PRIVATE_ANONYMOUS = 0x22;
const MADV_DONTFORK = 10;
const MFD_CLOEXEC = 1;

export type PublishResult =
  | { readonly ok: true; readonly address: bigint; readonly kind: 'memfd' | 'anonymous' }
  | { readonly ok: false; readonly reason: string };

export class ProcessContextPublisher {
  #mapping: Mapping | undefined;
  #kind: 'memfd' | 'anonymous' = 'memfd';

  get published(): boolean {
    return this.#mapping !== undefined;
  }

  /** First call creates the mapping, later calls update it. Never throws. */
  publish(resource: Readonly<Record<string, ContextValue>>, attributes: Readonly<Record<string, ContextValue>>): PublishResult {
    try {
      const payload = encodeProcessContext(resource, attributes);
      if (payload.length > MAX_PAYLOAD) return { ok: false, reason: `payload of ${payload.length} bytes exceeds ${MAX_PAYLOAD}` };
      if (this.#mapping) return this.#update(this.#mapping, payload);
      const libc = loadLibc();
      if (!libc.ok) return { ok: false, reason: libc.reason };
      const l = libc.libc;
      let mapping: Mapping | undefined;
      const fd = l.memfdCreate(OTEL_CTX_SIGNATURE, MFD_CLOEXEC);
      if (fd >= 0) {
        try {
          ftruncateSync(fd, MAPPING_BYTES);
          mapping = l.mmap(MAPPING_BYTES, PROT_READ_WRITE, MAP_SHARED, fd);
        } finally {
          // The mapping keeps the memfd alive and visible in /proc/<pid>/maps.
          closeSync(fd);
        }
      }
      if (!mapping) {
        this.#kind = 'anonymous';
        mapping = l.mmap(MAPPING_BYTES, PROT_READ_WRITE, MAP_PRIVATE_ANONYMOUS, -1);
        if (!mapping) return { ok: false, reason: `mmap failed (errno ${l.errno()})` };
      }
      l.madvise(mapping.addr, MAPPING_BYTES, MADV_DONTFORK);
      const bytes = mapping.bytes;
      const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      bytes.set(payload, OTEL_CTX_HEADER_BYTES);
      dv.setUint32(8, OTEL_CTX_VERSION, true);
      dv.setUint32(12, payload.length, true);
      dv.setBigUint64(24, mapping.addr + BigInt(OTEL_CTX_HEADER_BYTES), true);
      dv.setBigUint64(16, unixNs(), true);
      // Signature last: a reader that sees it sees a complete header.
      const words = new BigUint64Array(bytes.buffer, bytes.byteOffset, 1);
      Atomics.store(words, 0, Buffer.from(OTEL_CTX_SIGNATURE, 'latin1').readBigUInt64LE(0));
      const named = l.nameAnonMapping(mapping.addr, MAPPING_BYTES, OTEL_CTX_SIGNATURE) === 0;
      if (this.#kind === 'anonymous' && !named) {
        return { ok: false, reason: 'memfd_create refused and the kernel cannot name anonymous mappings' };
      }
      this.#mapping = mapping;
      return { ok: true, address: mapping.addr, kind: this.#kind };
    } catch (err) {
      return { ok: false, reason: describe(err) };
    }
  }

  #update(mapping: Mapping, payload: Uint8Array): PublishResult {
    const bytes = mapping.bytes;
    const words = new BigUint64Array(bytes.buffer, bytes.byteOffset, 4);
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    // published_at = 0 tells readers an update is in progress.
    Atomics.store(words, 2, 0n);
    bytes.set(payload, OTEL_CTX_HEADER_BYTES);
    dv.setUint32(12, payload.length, true);
    Atomics.store(words, 2, unixNs());
    const libc = loadLibc();
    if (libc.ok) libc.libc.nameAnonMapping(mapping.addr, MAPPING_BYTES, OTEL_CTX_SIGNATURE);
    return { ok: true, address: mapping.addr, kind: this.#kind };
  }
}

function unixNs(): bigint {
  // Wall-clock ns, made strictly non-zero and distinct per publication.
  return BigInt(Date.now()) * 1_000_000n + (process.hrtime.bigint() % 1_000_000n) + 1n;
}
