import { diffDocument, FlameError, renderHtml } from '../debug/index.js';
import { EXIT_CODES, load, metricOf, parse, runCommand, SELECTION_OPTIONS, writeOutput } from './flame-common.js';

export const DIFF_USAGE = `usage: spanfuse diff <files or folder>... --operation NAME [--cpu|--wall|--offcpu|--samples] [-o diff.html]

Writes a differential flamegraph of one operation: its tail spans (samples
labelled profiler.tail.operation) against its normal spans (same span name,
no tail label; with spans.jsonl, same operation key), each side divided by
its number of spans. Widths are the tail per span; red frames grow in the
tail, dark red ones only tail spans run, blue ones shrink. A table lists the
frames that grow most.

  --operation NAME   operation key ("GET /report (SERVER)") or span name
  -o, --out FILE     where to write the page (default spanfuse-diff.html)

${EXIT_CODES}`;

export function diffCommand(args: string[]): Promise<void> {
  return runCommand('diff', () => {
    const { values, positionals } = parse(args, {
      operation: SELECTION_OPTIONS.operation,
      cpu: SELECTION_OPTIONS.cpu,
      wall: SELECTION_OPTIONS.wall,
      offcpu: SELECTION_OPTIONS.offcpu,
      samples: SELECTION_OPTIONS.samples,
      help: SELECTION_OPTIONS.help,
      out: { type: 'string', short: 'o' },
    });
    if (values.help === true) {
      console.log(DIFF_USAGE);
      return;
    }
    if (values.operation === undefined) throw new FlameError('usage', '--operation NAME is required (spanfuse tails DIR lists operations with tail spans)');
    const metric = metricOf(values);
    const loaded = load('diff', positionals);
    const doc = diffDocument(loaded, values.operation, metric);
    const path = writeOutput(values.out ?? 'spanfuse-diff.html', renderHtml(doc));
    const grow = (doc.growth ?? []).slice(0, 3).map((g) => `${g.name}${g.onlyInTail ? ' (only in tail)' : ''}`);
    console.log(`${path}\n  ${doc.title}: ${doc.details[0] ?? ''}\n  grows most: ${grow.join(', ') || 'nothing'}`);
  });
}
