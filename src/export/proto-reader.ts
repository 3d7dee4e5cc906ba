/** One top-level field of a protobuf message: varints as bigint, length-delimited as bytes. */
export interface ProtoField {
  readonly field: number;
  readonly varint?: bigint;
  readonly bytes?: Uint8Array;
}

/**
 * Reads the top-level fields of a small protobuf message (a server response).
 * Returns undefined for bytes that are not a well-formed message, so callers
 * can fall back to treating the body as text.
 */
export function readProtoFields(buf: Uint8Array): ProtoField[] | undefined {
  const out: ProtoField[] = [];
  let pos = 0;
  const varint = (): bigint | undefined => {
    let v = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (pos >= buf.length) return undefined;
      const b = buf[pos++] as number;
      v |= BigInt(b & 127) << shift;
      if ((b & 128) === 0) return v;
    }
    return undefined;
  };
  while (pos < buf.length) {
    const tag = varint();
    if (tag === undefined) return undefined;
    const field = Number(tag >> 3n);
    const wire = Number(tag & 7n);
    if (field === 0) return undefined;
    if (wire === 0) {
      const v = varint();
      if (v === undefined) return undefined;
      out.push({ field, varint: v });
    } else if (wire === 2) {
      const len = varint();
      if (len === undefined || pos + Number(len) > buf.length) return undefined;
      out.push({ field, bytes: buf.subarray(pos, pos + Number(len)) });
      pos += Number(len);
    } else if (wire === 1) {
      if (pos + 8 > buf.length) return undefined;
      pos += 8;
    } else if (wire === 5) {
      if (pos + 4 > buf.length) return undefined;
      pos += 4;
    } else {
      return undefined;
    }
  }
  return out;
}
