import { existsSync, statSync } from 'node:fs';
import { FlameError, loadInputs, ms, readSpans, spanOperation } from '../debug/index.js';
import type { Loaded } from '../debug/index.js';
import { EXIT_CODES, parse, runCommand } from './flame-common.js';

export const TAILS_USAGE = `usage: spanfuse tails DIR [--limit N] [--operation NAME]

Lists the most recent tail spans of an output folder with their figures
(duration, threshold, CPU, wall, off-CPU, samples, top frames) and the
command that draws each one's flamegraph. Reads spans.jsonl when spanfuse
wrote it, and the profiles' profiler.tail.operation labels (spans the app
exported itself are found there, with the figures of their samples).

  --limit N          spans to list, newest first (default 20)
  --operation NAME   only this operation (key or span name)

${EXIT_CODES}`;

interface TailLine {
  spanId: string;
  operation: string;
  quantile: string;
  endNs: number;
  durationMs: number | undefined;
  thresholdMs: number | undefined;
  cpuNs: number | undefined;
  wallNs: number | undefined;
  offNs: number | undefined;
  samples: number;
  topFrames: string;
  source: string;
}

export function tailsCommand(args: string[]): Promise<void> {
  return runCommand('tails', () => {
    const { values, positionals } = parse(args, {
      limit: { type: 'string' },
      operation: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    });
    if (values.help === true) {
      console.log(TAILS_USAGE);
      return;
    }
    const limit = values.limit === undefined ? 20 : Number(values.limit);
    if (!Number.isSafeInteger(limit) || limit < 1) throw new FlameError('usage', `--limit: expected a whole number from 1, got ${JSON.stringify(values.limit)}`);
    if (positionals.length !== 1) throw new FlameError('usage', 'give one output folder (SPANFUSE_OUTPUT_DIR)');
    const dir = positionals[0]!;
    if (!existsSync(dir)) throw new FlameError('input', `${dir}: no such folder`);
    if (!statSync(dir).isDirectory()) throw new FlameError('input', `${dir}: not a folder; give the output folder`);
    const byId = new Map<string, TailLine>();
    for (const s of readSpans(dir)) {
      if (s.attributes['profiler.tail'] !== true) continue;
      const num = (k: string): number | undefined => {
        const v = s.attributes[k];
        return typeof v === 'number' ? v : undefined;
      };
      const text = (k: string): string => {
        const v = s.attributes[k];
        // profiler.top_frames is a string array attribute.
        if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string').join(', ');
        return typeof v === 'string' ? v : '';
      };
      byId.set(s.spanId, {
        spanId: s.spanId,
        operation: spanOperation(s),
        quantile: text('profiler.tail.quantile'),
        endNs: s.endNs,
        durationMs: (s.endNs - s.startNs) / 1e6,
        thresholdMs: num('profiler.tail.threshold_ms'),
        cpuNs: num('profiler.cpu.time_ns'),
        wallNs: num('profiler.wall.time_ns'),
        offNs: num('profiler.offcpu.time_ns'),
        samples: num('profiler.samples') ?? 0,
        topFrames: text('profiler.top_frames'),
        source: 'spans.jsonl',
      });
    }
    let loaded: Loaded | undefined;
    try {
      loaded = loadInputs([dir]);
    } catch (err) {
      // Spans alone still make a list; no spans and no profiles do not.
      if (!(err instanceof FlameError) || byId.size === 0) throw err;
    }
    if (loaded !== undefined) addFromLabels(loaded, byId);
    let list = [...byId.values()];
    if (values.operation !== undefined) {
      const op = values.operation;
      list = list.filter((t) => t.operation === op || t.operation.startsWith(`${op} (`) || t.operation.startsWith(`${op} `));
    }
    if (list.length === 0) {
      throw new FlameError('not-found', `no tail spans${values.operation === undefined ? '' : ` of operation ${JSON.stringify(values.operation)}`} in ${dir}`);
    }
    list.sort((a, b) => b.endNs - a.endNs);
    const shown = list.slice(0, limit);
    console.log(`${list.length} tail span${list.length === 1 ? '' : 's'} in ${dir}; newest ${shown.length}:`);
    const opt = (v: number | undefined, f: (x: number) => string): string => (v === undefined ? '-' : f(v));
    for (const t of shown) {
      const when = t.endNs > 0 ? new Date(t.endNs / 1e6).toISOString() : '-';
      console.log(`\n${t.spanId}  ${t.operation}  [${t.quantile}]  ended ${when}  (${t.source})`);
      console.log(
        `  duration ${opt(t.durationMs, (v) => `${v.toFixed(1)} ms`)} (threshold ${opt(t.thresholdMs, (v) => `${v.toFixed(1)} ms`)}), cpu ${opt(t.cpuNs, ms)}, wall ${opt(t.wallNs, ms)}, off-cpu ${opt(t.offNs, ms)}, ${t.samples} samples`,
      );
      if (t.topFrames !== '') console.log(`  top frames: ${t.topFrames}`);
      console.log(`  flamegraph: spanfuse flame ${shellQuote(dir)} --span ${t.spanId} -o flame-${t.spanId}.html`);
    }
    const ops = [...new Set(list.map((t) => t.operation))].slice(0, 3);
    console.log(`\ntail vs normal: ${ops.map((o) => `spanfuse diff ${shellQuote(dir)} --operation ${shellQuote(o)} -o diff.html`).join('\n                ')}`);
  });
}

function addFromLabels(loaded: Loaded, byId: Map<string, TailLine>): void {
  const { store } = loaded;
  const seen = new Map<string, TailLine>();
  for (const r of store.rows) {
    if (r.tailOperation === '' || r.spanId === '') continue;
    const known = byId.get(r.spanId);
    if (known !== undefined && known.source === 'spans.jsonl') continue;
    let t = seen.get(r.spanId);
    if (t === undefined) {
      t = {
        spanId: r.spanId,
        operation: r.tailOperation,
        quantile: r.tailQuantile,
        endNs: 0,
        durationMs: undefined,
        thresholdMs: undefined,
        cpuNs: 0,
        wallNs: 0,
        offNs: undefined,
        samples: 0,
        topFrames: '',
        source: 'profile labels',
      };
      seen.set(r.spanId, t);
      byId.set(r.spanId, t);
    }
    t.samples += r.samples;
    t.wallNs = (t.wallNs ?? 0) + r.wallNs;
    t.cpuNs = (t.cpuNs ?? 0) + r.cpuNs;
    t.endNs = Math.max(t.endNs, r.timeNs, store.windows[r.window]?.endNs ?? 0);
  }
}

function shellQuote(s: string): string {
  return /^[\w./:@=-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
