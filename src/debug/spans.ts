import { join } from 'node:path';
import { SPANS_BACKUP_FILE, SPANS_FILE } from '../tracing/jsonl-processor.js';
import { fs } from '../core/builtins.js';

const { readFileSync } = fs;

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
  /** Spans this line stands for: N when the writer kept one trace in N of the spans out of the tail, else 1. */
  readonly adjustedCount: number;
}

/** The spans a parsed line stands for (`adjustedCount`, 1 when absent or not a count). */
export function adjustedCountOf(o: Readonly<Record<string, unknown>>): number {
  const n = o.adjustedCount;
  return typeof n === 'number' && Number.isFinite(n) && n >= 1 ? n : 1;
}

/** The span files of an output folder, oldest first: the rotated backup, then the current file. */
export const SPAN_FILES = [SPANS_BACKUP_FILE, SPANS_FILE] as const;

/** What the span files of a folder hold: every line that parsed, and the count of those that did not. */
export interface SpanFileObjects {
  /** Span files found, oldest first. */
  readonly files: string[];
  /** Each line that parsed as JSON, in file order. */
  readonly objects: Record<string, unknown>[];
  /** Non-empty lines that did not parse (a torn last line of a killed writer). */
  readonly skippedLines: number;
}

/** Read `spans.1.jsonl` then `spans.jsonl` in `dir`; absent files are left out. */
export function readSpanFileObjects(dir: string): SpanFileObjects {
  const files: string[] = [];
  const objects: Record<string, unknown>[] = [];
  let skippedLines = 0;
  for (const name of SPAN_FILES) {
    let text: string;
    try {
      text = readFileSync(join(dir, name), 'utf8');
    } catch {
      continue; // no such file: the app exports its spans itself, or nothing rotated yet
    }
    files.push(name);
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        const o: unknown = JSON.parse(line);
        if (typeof o === 'object' && o !== null && !Array.isArray(o)) objects.push(o as Record<string, unknown>);
        else skippedLines++;
      } catch {
        skippedLines++;
      }
    }
  }
  return { files, objects, skippedLines };
}

/** Spans of `spans.1.jsonl` (older) then `spans.jsonl` in `dir`; none when absent. Bad lines are skipped. */
export function readSpans(dir: string): SpanRecord[] {
  const text = (v: unknown): string => (typeof v === 'string' ? v : '');
  return readSpanFileObjects(dir).objects.map((o) => ({
    traceId: text(o.traceId),
    spanId: text(o.spanId),
    parentSpanId: text(o.parentSpanId),
    name: text(o.name),
    kind: typeof o.kind === 'number' ? o.kind : 0,
    startNs: Number(text(o.startTimeUnixNano) || 0),
    endNs: Number(text(o.endTimeUnixNano) || 0),
    attributes: typeof o.attributes === 'object' && o.attributes !== null ? (o.attributes as Record<string, unknown>) : {},
    adjustedCount: adjustedCountOf(o),
  }));
}
