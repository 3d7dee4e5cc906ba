/**
 * A minimal protobuf writer: one growing buffer, nested messages written in
 * place. `fork()` reserves one byte for the length; `join()` fills it in and,
 * for the rare message of 128 bytes or more, shifts the body right to make
 * room for a longer varint. That keeps encoding a single pass with no
 * per-message allocation, which matters for windows of 100k samples.
 */
const WIRE_VARINT = 0;
const WIRE_I64 = 1;
const WIRE_LEN = 2;

const TWO_32 = 4294967296;

export class ProtoWriter {
  #buf: Buffer;
  #pos = 0;
  readonly #forks: number[] = [];

  constructor(initialBytes = 64 * 1024) {
    this.#buf = Buffer.allocUnsafe(initialBytes);
  }

  get length(): number {
    return this.#pos;
  }

  /** The bytes written so far (a copy that owns its memory). */
  finish(): Uint8Array {
    if (this.#forks.length !== 0) throw new Error('ProtoWriter: unjoined fork');
    return Uint8Array.prototype.slice.call(this.#buf, 0, this.#pos);
  }

  #ensure(n: number): void {
    if (this.#pos + n <= this.#buf.length) return;
    let size = this.#buf.length * 2;
    while (size < this.#pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.#buf.copy(next, 0, 0, this.#pos);
    this.#buf = next;
  }

  #tag(field: number, wire: number): void {
    this.#rawVarint(field * 8 + wire);
  }

  /** Unsigned varint of a non-negative safe integer. */
  #rawVarint(v: number): void {
    this.#ensure(10);
    const b = this.#buf;
    let p = this.#pos;
    if (v < TWO_32) {
      while (v > 127) {
        b[p++] = (v & 127) | 128;
        v >>>= 7;
      }
      b[p++] = v;
    } else {
      // Beyond 32 bits, bit operators truncate: split by division.
      while (v > 127) {
        b[p++] = (v % 128) | 128;
        v = Math.floor(v / 128);
      }
      b[p++] = v;
    }
    this.#pos = p;
  }

  #rawBigVarint(v: bigint): void {
    // Two's complement for negatives, as int64 requires (10 bytes). Written
    // from two 32-bit halves as numbers: a loop of BigInt shifts would
    // allocate a BigInt per step (a nanosecond timestamp label is 9 steps).
    const u = BigInt.asUintN(64, v);
    this.#rawVarintHalves(Number(u & 0xffffffffn), Number(u >> 32n));
  }

  /** Unsigned varint of `hi * 2^32 + lo` (two uint32 halves). */
  #rawVarintHalves(lo: number, hi: number): void {
    this.#ensure(10);
    const b = this.#buf;
    let p = this.#pos;
    while (hi !== 0) {
      b[p++] = (lo & 127) | 128;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    while (lo > 127) {
      b[p++] = (lo & 127) | 128;
      lo >>>= 7;
    }
    b[p++] = lo;
    this.#pos = p;
  }

  /** int32/int64/uint32/uint64 field; skipped when zero (proto3 default). */
  varint(field: number, v: number | bigint): void {
    if (v === 0 || v === 0n) return;
    this.varintAlways(field, v);
  }

  /** Like `varint` but written even when zero (repeated, or oneof members). */
  varintAlways(field: number, v: number | bigint): void {
    this.#tag(field, WIRE_VARINT);
    this.#value(v);
  }

  #value(v: number | bigint): void {
    if (typeof v === 'bigint') this.#rawBigVarint(v);
    else if (v >= 0 && Number.isSafeInteger(v)) this.#rawVarint(v);
    else this.#rawBigVarint(BigInt(Math.trunc(v)));
  }

  /**
   * A uint64 varint field holding `us` microseconds as nanoseconds, exactly
   * and without a BigInt (see {@link fixed64ElementMicros}); skipped when zero.
   */
  varintMicrosAsNanos(field: number, us: number): void {
    if (us === 0) return;
    if (!(us >= 0 && Number.isSafeInteger(us))) {
      this.varint(field, BigInt(Math.trunc(us)) * 1000n);
      return;
    }
    this.#tag(field, WIRE_VARINT);
    const halves = nanosHalves(us);
    this.#rawVarintHalves(halves[0], halves[1]);
  }

  bool(field: number, v: boolean): void {
    this.#tag(field, WIRE_VARINT);
    this.#rawVarint(v ? 1 : 0);
  }

  fixed64(field: number, v: bigint): void {
    if (v === 0n) return;
    this.#tag(field, WIRE_I64);
    this.#rawFixed64(v);
  }

  #rawFixed64(v: bigint): void {
    this.#ensure(8);
    this.#buf.writeBigUInt64LE(BigInt.asUintN(64, v), this.#pos);
    this.#pos += 8;
  }

  double(field: number, v: number): void {
    this.#tag(field, WIRE_I64);
    this.#ensure(8);
    this.#buf.writeDoubleLE(v, this.#pos);
    this.#pos += 8;
  }

  /** A string field; written even when empty if `always` (repeated strings). */
  string(field: number, s: string, always = false): void {
    if (s === '' && !always) return;
    this.#tag(field, WIRE_LEN);
    const n = Buffer.byteLength(s);
    this.#rawVarint(n);
    this.#ensure(n);
    this.#pos += this.#buf.write(s, this.#pos, 'utf8');
  }

  bytes(field: number, b: Uint8Array, always = false): void {
    if (b.length === 0 && !always) return;
    this.#tag(field, WIRE_LEN);
    this.#rawVarint(b.length);
    this.#ensure(b.length);
    this.#buf.set(b, this.#pos);
    this.#pos += b.length;
  }

  /** Packed repeated varints (int32/int64). Nothing is written for an empty list. */
  packedVarints(field: number, values: ArrayLike<number | bigint>): void {
    if (values.length === 0) return;
    this.fork(field);
    for (let i = 0; i < values.length; i++) this.#value(values[i] as number | bigint);
    this.join();
  }

  /** Packed repeated fixed64. */
  packedFixed64(field: number, values: ArrayLike<bigint>): void {
    if (values.length === 0) return;
    this.packedFixed64Start(field, values.length);
    for (let i = 0; i < values.length; i++) this.#rawFixed64(values[i] as bigint);
  }

  /**
   * A packed field built element by element: `fork(field)`, then
   * `element(v)` per value, then `join()`.
   */
  element(v: number | bigint): void {
    this.#value(v);
  }

  /** Start a packed repeated fixed64 field of `count` elements; write them with `fixed64Element*`. */
  packedFixed64Start(field: number, count: number): void {
    this.#tag(field, WIRE_LEN);
    this.#rawVarint(count * 8);
  }

  fixed64Element(v: bigint): void {
    this.#rawFixed64(v);
  }

  /**
   * One fixed64 element holding `us` microseconds as nanoseconds, exactly,
   * without a BigInt: `us` (a non-negative integer below 2^53) is split at
   * 2^32, so each half times 1000 stays exact in a double.
   */
  fixed64ElementMicros(us: number): void {
    if (!(us >= 0 && Number.isSafeInteger(us))) {
      this.#rawFixed64(BigInt(Math.trunc(us)) * 1000n);
      return;
    }
    const halves = nanosHalves(us);
    this.#ensure(8);
    this.#buf.writeUInt32LE(halves[0], this.#pos);
    this.#buf.writeUInt32LE(halves[1], this.#pos + 4);
    this.#pos += 8;
  }

  /** Start a length-delimited sub-message on `field`; end it with `join()`. */
  fork(field: number): void {
    this.#tag(field, WIRE_LEN);
    this.#ensure(1);
    this.#forks.push(this.#pos);
    this.#pos += 1;
  }

  join(): void {
    const at = this.#forks.pop();
    if (at === undefined) throw new Error('ProtoWriter: join without fork');
    const len = this.#pos - at - 1;
    if (len < 128) {
      this.#buf[at] = len;
      return;
    }
    let extra = 0;
    for (let v = len >>> 7; v > 0; v >>>= 7) extra++;
    this.#ensure(extra);
    this.#buf.copyWithin(at + 1 + extra, at + 1, this.#pos);
    this.#pos += extra;
    let p = at;
    let v = len;
    while (v > 127) {
      this.#buf[p++] = (v & 127) | 128;
      v >>>= 7;
    }
    this.#buf[p] = v;
  }
}

const HALVES: [number, number] = [0, 0];

/**
 * `us * 1000` as uint32 halves [low, high], exact for a non-negative safe
 * integer `us`: it is split at 2^32 so each part times 1000 stays exact in a
 * double. Past 2^64 ns (year 2554) the high word wraps, as
 * `BigInt.asUintN(64)` would. Returns one shared pair (read it at once, by
 * index: destructuring it would make an iterator in unoptimized code).
 */
function nanosHalves(us: number): [number, number] {
  const hi = Math.floor(us / TWO_32);
  const lo = (us - hi * TWO_32) * 1000;
  const carry = Math.floor(lo / TWO_32);
  HALVES[0] = lo - carry * TWO_32;
  HALVES[1] = (hi * 1000 + carry) % TWO_32;
  return HALVES;
}
