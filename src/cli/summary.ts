import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Profile } from '../core/pprof.js';
import { parseWindowFileName } from '../export/index.js';
import { formatUnattributed, UnattributedReader } from './summary-unattributed.js';
import type { UnattributedSummary } from './summary-unattributed.js';

export interface SpanCpu {
  readonly spanId: string;
  readonly name: string;
  readonly cpuNs: number;
  readonly samples: number;
}

export interface OutputSummary {
  readonly windows: number;
  readonly samples: number;
  readonly samplesWithSpan: number;
  readonly cpuNs: number;
  readonly spansInFile: number;
  readonly topOperations: Array<{ readonly name: string; readonly cpuNs: number; readonly samples: number; readonly spans: number }>;
  readonly topSpans: SpanCpu[];
  readonly files: string[];
  /** CPU samples with no span while spans were in flight (context loss). */
  readonly unattributed: UnattributedSummary;
}


/** Read an output folder back with an independent decode of the files written. */
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
  const unattributed = new UnattributedReader();
  for (const f of files) {
    const p = Profile.decode(gunzipSync(readFileSync(join(dir, f))));
    unattributed.add(p);
    const str = (i: number | bigint): string => p.stringTable.strings[Number(i)] ?? '';
    const types = p.sampleType.map((t) => str(t.type));
    const iCount = types.indexOf('sample');
    const iCpu = types.indexOf('cpu');
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
  let spansInFile = 0;
  try {
    const sinceNs = BigInt(Math.floor(since)) * 1_000_000n;
    for (const line of readFileSync(join(dir, 'spans.jsonl'), 'utf8').split('\n')) {
      if (line === '') continue;
      const span = JSON.parse(line) as { startTimeUnixNano?: string };
      if (BigInt(span.startTimeUnixNano ?? '0') >= sinceNs) spansInFile++;
    }
  } catch {
    // No span file: the app exports spans itself.
  }
  return {
    windows: files.length,
    samples,
    samplesWithSpan: withSpan,
    cpuNs: cpuTotal,
    spansInFile,
    topOperations: [...ops.values()].sort((a, b) => b.cpuNs - a.cpuNs).slice(0, top),
    topSpans: [...bySpan.entries()]
      .map(([spanId, e]) => ({ spanId, ...e }))
      .sort((a, b) => b.cpuNs - a.cpuNs)
      .slice(0, top),
    files,
    unattributed: unattributed.summary(top),
  };
}

export function formatSummary(s: OutputSummary, dir: string): string {
  const ms = (ns: number): string => `${(ns / 1e6).toFixed(1)} ms`;
  const pct = s.samples === 0 ? 0 : (100 * s.samplesWithSpan) / s.samples;
  const lines = [
    `output:        ${dir}`,
    `windows:       ${s.windows} pprof files (*.pb.gz)`,
    `samples:       ${s.samples} (${pct.toFixed(1)}% carry a span), CPU ${ms(s.cpuNs)}`,
    `spans.jsonl:   ${s.spansInFile} spans`,
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
