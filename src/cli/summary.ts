import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Profile } from '../core/pprof.js';
import { sampleTypeIndex } from '../core/profile-index.js';
import { parseWindowFileName } from '../export/index.js';
import { adjustedCountOf, readSpanFileObjects } from '../debug/index.js';
import { formatUnattributed, UnattributedReader } from './summary-unattributed.js';
import type { UnattributedSummary } from './summary-unattributed.js';

export interface SpanCpu {
  readonly spanId: string;
  readonly name: string;
  readonly cpuNs: number;
  readonly samples: number;
}

/** A file the summary could not read, and why. */
export interface SkippedFile {
  readonly file: string;
  readonly reason: string;
}

export interface OutputSummary {
  readonly windows: number;
  readonly samples: number;
  readonly samplesWithSpan: number;
  readonly cpuNs: number;
  readonly spansInFile: number;
  /** Span files read, oldest first (`spans.1.jsonl`, then `spans.jsonl`). */
  readonly spanFiles: string[];
  /** Lines of the span files that are not a whole JSON span (a write cut short). */
  readonly skippedSpanLines: number;
  readonly topOperations: Array<{ readonly name: string; readonly cpuNs: number; readonly samples: number; readonly spans: number }>;
  readonly topSpans: SpanCpu[];
  readonly files: string[];
  /** Window files that could not be decoded (corrupt, truncated): named, left out. */
  readonly skippedFiles: SkippedFile[];
  /** CPU samples with no span while spans were in flight (context loss). */
  readonly unattributed: UnattributedSummary;
}


/**
 * Read an output folder back with an independent decode of the files
 * written. A file that cannot be decoded is skipped and named, never fatal.
 */
export function summarize(dir: string, opts: { top?: number; sinceMs?: number } = {}): OutputSummary {
  const top = opts.top ?? 5;
  const since = opts.sinceMs ?? 0;
  const files = readdirSync(dir)
    .filter((f) => parseWindowFileName(f)?.kind === 'wall' && statSync(join(dir, f)).mtimeMs >= since)
    .sort();
  let samples = 0;
  let withSpan = 0;
  let cpuTotal = 0;
  const bySpan = new Map<string, { name: string; cpuNs: number; samples: number }>();
  const read: string[] = [];
  const skippedFiles: SkippedFile[] = [];
  const unattributed = new UnattributedReader();
  for (const f of files) {
    let p: Profile;
    try {
      p = Profile.decode(gunzipSync(readFileSync(join(dir, f))));
    } catch (err) {
      skippedFiles.push({ file: f, reason: err instanceof Error ? err.message : String(err) });
      continue;
    }
    read.push(f);
    unattributed.add(p);
    const str = (i: number | bigint): string => p.stringTable.strings[Number(i)] ?? '';
    const iCount = sampleTypeIndex(p, 'sample');
    const iCpu = sampleTypeIndex(p, 'cpu');
    for (const s of p.sample) {
      const n = Number(s.value[iCount] ?? 0);
      const cpu = iCpu >= 0 ? Number(s.value[iCpu] ?? 0) : 0;
      samples += n;
      cpuTotal += cpu;
      let spanId = '';
      let name = '';
      for (const l of s.label) {
        const k = str(l.key);
        if (k === 'span_id') spanId = str(l.str);
        else if (k === 'span_name') name = str(l.str);
      }
      if (spanId === '') continue;
      withSpan += n;
      const e = bySpan.get(spanId) ?? { name, cpuNs: 0, samples: 0 };
      e.cpuNs += cpu;
      e.samples += n;
      bySpan.set(spanId, e);
    }
  }
  const ops = new Map<string, { name: string; cpuNs: number; samples: number; spans: number }>();
  for (const e of bySpan.values()) {
    const o = ops.get(e.name) ?? { name: e.name, cpuNs: 0, samples: 0, spans: 0 };
    o.cpuNs += e.cpuNs;
    o.samples += e.samples;
    o.spans++;
    ops.set(e.name, o);
  }
  const spans = countSpans(dir, BigInt(Math.floor(since)) * 1_000_000n);
  return {
    windows: read.length,
    samples,
    samplesWithSpan: withSpan,
    cpuNs: cpuTotal,
    spansInFile: spans.count,
    spanFiles: spans.files,
    skippedSpanLines: spans.skipped,
    topOperations: [...ops.values()].sort((a, b) => b.cpuNs - a.cpuNs).slice(0, top),
    topSpans: [...bySpan.entries()]
      .map(([spanId, e]) => ({ spanId, ...e }))
      .sort((a, b) => b.cpuNs - a.cpuNs)
      .slice(0, top),
    files: read,
    skippedFiles,
    unattributed: unattributed.summary(top),
  };
}

/**
 * Spans started at or after `sinceNs` in every span file, each line counted
 * as the spans it stands for (`adjustedCount`); lines that are not a whole
 * span are counted apart.
 */
function countSpans(dir: string, sinceNs: bigint): { count: number; skipped: number; files: string[] } {
  const read = readSpanFileObjects(dir);
  let count = 0;
  let skipped = read.skippedLines;
  for (const span of read.objects) {
    let start: bigint;
    try {
      start = BigInt(typeof span.startTimeUnixNano === 'string' ? span.startTimeUnixNano : '0');
    } catch {
      skipped++;
      continue;
    }
    if (start >= sinceNs) count += adjustedCountOf(span);
  }
  return { count, skipped, files: read.files };
}

/** Nothing spanfuse wrote is in the folder (or nothing could be read). */
export function isEmptySummary(s: OutputSummary): boolean {
  return s.windows === 0 && s.spansInFile === 0 && s.skippedFiles.length === 0 && s.skippedSpanLines === 0;
}

export function formatSummary(s: OutputSummary, dir: string): string {
  const ms = (ns: number): string => `${(ns / 1e6).toFixed(1)} ms`;
  const pct = s.samples === 0 ? 0 : (100 * s.samplesWithSpan) / s.samples;
  const spanFiles = s.spanFiles.length === 0 ? 'no span file' : s.spanFiles.join(' + ');
  const lines = [
    `output:        ${dir}`,
    `windows:       ${s.windows} pprof files (*.pb.gz)${s.skippedFiles.length > 0 ? `, ${s.skippedFiles.length} unreadable (skipped)` : ''}`,
    `samples:       ${s.samples} (${pct.toFixed(1)}% carry a span), CPU ${ms(s.cpuNs)}`,
    `spans:         ${s.spansInFile} spans (${spanFiles})${s.skippedSpanLines > 0 ? `, ${s.skippedSpanLines} broken lines skipped` : ''}`,
    ...s.skippedFiles.map((f) => `skipped:       ${f.file}: ${f.reason}`),
    '',
    'top operations by CPU:',
    ...s.topOperations.map((o) => `  ${o.name.padEnd(18)} ${ms(o.cpuNs).padStart(10)}  ${String(o.samples).padStart(6)} samples  ${o.spans} spans`),
    '',
    'top spans by CPU:',
    ...s.topSpans.map((t) => `  ${t.spanId}  ${t.name.padEnd(18)} ${ms(t.cpuNs).padStart(10)}  ${t.samples} samples`),
    ...formatUnattributed(s.unattributed),
  ];
  return lines.join('\n');
}
