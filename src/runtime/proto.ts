/**
 * A minimal protobuf writer for the OTEP-4719 payload: just varints and
 * length-delimited fields, enough for ProcessContext / Resource / KeyValue /
 * AnyValue (opentelemetry-proto common/resource/processcontext, v1.11.0).
 */
export type ContextValue = string | boolean | number | readonly string[];

class Writer {
  readonly parts: number[] = [];
  varint(n: number | bigint): this {
    let v = BigInt.asUintN(64, BigInt(n));
    while (v >= 0x80n) {
      this.parts.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    this.parts.push(Number(v));
    return this;
  }
  tag(field: number, wire: number): this {
    return this.varint((field << 3) | wire);
  }
  bytes(field: number, b: Uint8Array): this {
    this.tag(field, 2).varint(b.length);
    for (const x of b) this.parts.push(x);
    return this;
  }
  string(field: number, s: string): this {
    return this.bytes(field, Buffer.from(s, 'utf8'));
  }
  double(field: number, d: number): this {
    this.tag(field, 1);
    const b = Buffer.alloc(8);
    b.writeDoubleLE(d);
    for (const x of b) this.parts.push(x);
    return this;
  }
  finish(): Uint8Array {
    return Uint8Array.from(this.parts);
  }
}

// AnyValue: string_value=1, bool_value=2, int_value=3, double_value=4, array_value=5 (ArrayValue{values=1})
function anyValue(v: ContextValue): Uint8Array {
  const w = new Writer();
  if (typeof v === 'string') w.string(1, v);
  else if (typeof v === 'boolean') w.tag(2, 0).varint(v ? 1 : 0);
  else if (typeof v === 'number') {
    if (Number.isSafeInteger(v)) w.tag(3, 0).varint(v);
    else w.double(4, v);
  } else {
    const arr = new Writer();
    for (const s of v) arr.bytes(1, anyValue(s));
    w.bytes(5, arr.finish());
  }
  return w.finish();
}

// KeyValue: key=1, value=2
function keyValues(w: Writer, field: number, attrs: Readonly<Record<string, ContextValue>>): void {
  for (const [k, v] of Object.entries(attrs)) {
    w.bytes(field, new Writer().string(1, k).bytes(2, anyValue(v)).finish());
  }
}

/** ProcessContext{resource=1 Resource{attributes=1}, attributes=2}. */
export function encodeProcessContext(
  resource: Readonly<Record<string, ContextValue>>,
  attributes: Readonly<Record<string, ContextValue>>,
): Uint8Array {
  const res = new Writer();
  keyValues(res, 1, resource);
  const w = new Writer().bytes(1, res.finish());
  keyValues(w, 2, attributes);
  return w.finish();
}
