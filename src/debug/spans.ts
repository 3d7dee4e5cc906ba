import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A span from `spans.jsonl`, as the tools need it. */
export interface SpanRecord {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  readonly kind: number;
  readonly startNs: number;
  readonly endNs: number;
  readonly attributes: Readonly<Record<string, unknown>>;
}

/** Spans of `spans.1.jsonl` (older) then `spans.jsonl` in `dir`; none when absent. Bad lines are skipped. */
export function readSpans(dir: string): SpanRecord[] {
  const out: SpanRecord[] = [];
  for (const name of ['spans.1.jsonl', 'spans.jsonl']) {
    let text: string;
    try {
      text = readFileSync(join(dir, name), 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        const o = JSON.parse(line) as Record<string, unknown>;
        const text = (v: unknown): string => (typeof v === 'string' ? v : '');
        out.push({
          traceId: text(o.traceId),
          spanId: text(o.spanId),
          parentSpanId: typeof o.parentSpanId === 'string' ? o.parentSpanId : '',
          name: text(o.name),
          kind: typeof o.kind === 'number' ? o.kind : 0,
          startNs: Number(text(o.startTimeUnixNano) || 0),
          endNs: Number(text(o.endTimeUnixNano) || 0),
          attributes: typeof o.attributes === 'object' && o.attributes !== null ? (o.attributes as Record<string, unknown>) : {},
        });
      } catch {
        // A torn last line (the writer was killed mid-append): skip it.
      }
    }
  }
  return out;
}
