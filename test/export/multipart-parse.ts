// Test-side multipart/form-data reader (independent of the exporter's writer).
export interface Part {
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

export function parseMultipart(body: Buffer, contentType: string): Part[] {
  const m = /boundary=("?)([^";]+)\1/.exec(contentType);
  if (!m?.[2]) throw new Error(`no boundary in ${contentType}`);
  const delim = Buffer.from(`--${m[2]}`);
  const parts: Part[] = [];
  let pos = body.indexOf(delim);
  while (pos !== -1) {
    const start = pos + delim.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delim, start);
    if (next === -1) break;
    const chunk = body.subarray(start + 2, next - 2); // skip CRLF after the delimiter and before the next
    const sep = chunk.indexOf('\r\n\r\n');
    const headers: Record<string, string> = {};
    for (const line of chunk.subarray(0, sep).toString().split('\r\n')) {
      const i = line.indexOf(':');
      if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    parts.push({ headers, body: chunk.subarray(sep + 4) });
    pos = next;
  }
  return parts;
}
