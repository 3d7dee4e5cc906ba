/**
 * A minimal protobuf reader for the OTLP Profiles request: walks the fields
 * of one message; nested messages come back as byte ranges to walk again.
 * Numbers are read as JS numbers (nanosecond timestamps lose a few hundred
 * ns of precision, which no flamegraph shows).
 */
export class ProtoError extends Error {}

export type FieldVisitor = (field: number, wire: number, r: ProtoReader) => void;

export class ProtoReader {
  readonly buf: Uint8Array;
  pos: number;
  readonly end: number;

  constructor(buf: Uint8Array, start = 0, end = buf.length) {
    this.buf = buf;
    this.pos = start;
    this.end = end;
  }

  varint(): number {
    let v = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new ProtoError('truncated varint');
      const b = this.buf[this.pos++] as number;
      v += (b & 127) * mul;
      if ((b & 128) === 0) return v;
      mul *= 128;
    }
    throw new ProtoError('varint too long');
  }

  fixed64(): number {
    if (this.pos + 8 > this.end) throw new ProtoError('truncated fixed64');
    const b = this.buf;
    const p = this.pos;
    const lo = ((b[p] as number) | ((b[p + 1] as number) << 8) | ((b[p + 2] as number) << 16) | ((b[p + 3] as number) << 24)) >>> 0;
    const hi = ((b[p + 4] as number) | ((b[p + 5] as number) << 8) | ((b[p + 6] as number) << 16) | ((b[p + 7] as number) << 24)) >>> 0;
    this.pos += 8;
    return hi * 4294967296 + lo;
  }

  /** A length-delimited field as a reader over its bytes. */
  sub(): ProtoReader {
    const len = this.varint();
    if (this.pos + len > this.end) throw new ProtoError('truncated length-delimited field');
    const r = new ProtoReader(this.buf, this.pos, this.pos + len);
    this.pos += len;
    return r;
  }

  bytes(): Uint8Array {
    const r = this.sub();
    return this.buf.subarray(r.pos, r.end);
  }

  string(): string {
    return Buffer.from(this.bytes()).toString('utf8');
  }

  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 1) this.pos += 8;
    else if (wire === 2) this.sub();
    else if (wire === 5) this.pos += 4;
    else throw new ProtoError(`unsupported wire type ${wire}`);
    if (this.pos > this.end) throw new ProtoError('truncated field');
  }

  /** Visit every field; the visitor must consume the value or call `skip`. */
  each(visit: FieldVisitor): void {
    while (this.pos < this.end) {
      const tag = this.varint();
      const field = Math.floor(tag / 8);
      const wire = tag & 7;
      if (field === 0) throw new ProtoError('field number 0');
      const before = this.pos;
      visit(field, wire, this);
      if (this.pos === before) this.skip(wire);
    }
  }

  /** A repeated scalar field, packed (wire 2) or not. */
  repeated(wire: number, out: number[], read: (r: ProtoReader) => number): void {
    if (wire === 2) {
      const r = this.sub();
      while (r.pos < r.end) out.push(read(r));
    } else out.push(read(this));
  }
}
