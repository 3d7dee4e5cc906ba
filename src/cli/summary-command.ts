import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { readEnv } from '../config/index.js';
import type { Command } from './command.js';
import { CliExit, EXIT, UsageError } from './command.js';
import { formatSummary, isEmptySummary, summarize } from './summary.js';

export const summaryCommand: Command = {
  name: 'summary',
  summary: 'summarize an output folder',
  usage: `usage: spanfuse summary [DIR] [--json]

Summarize a spanfuse output folder: windows, samples, spans and the top
operations and spans by CPU. DIR defaults to $SPANFUSE_OUTPUT_DIR, then
./spanfuse-out. Unreadable window files and broken span lines are skipped
and reported; the rest is summarized. --json prints the summary as JSON
(with unattributed.topFunctions: CPU samples that carried no span while
spans were in flight on their thread, i.e. where context was lost).

exit status: 0 summarized, 2 bad arguments, 3 no spanfuse output in DIR`,
  run(args) {
    const { positionals, values } = parseArgs({ args, options: { json: { type: 'boolean', default: false } }, allowPositionals: true, strict: true });
    if (positionals.length > 1) {
      throw new UsageError(`summary takes one folder, got ${positionals.length} arguments: ${positionals.map((p) => JSON.stringify(p)).join(' ')}`, 'summary');
    }
    const given = positionals[0] ?? nonEmpty(readEnv()['SPANFUSE_OUTPUT_DIR']);
    const dir = resolve(given ?? './spanfuse-out');
    const from = positionals[0] !== undefined ? '' : given !== undefined ? ' (from SPANFUSE_OUTPUT_DIR)' : ' (the default; give a folder or set SPANFUSE_OUTPUT_DIR)';
    if (!existsSync(dir)) throw new CliExit(EXIT.noOutput, `summary: no folder ${dir}${from}`);
    if (!statSync(dir).isDirectory()) throw new UsageError(`summary: ${dir} is a file, not an output folder`, 'summary');
    const s = summarize(dir);
    if (isEmptySummary(s)) {
      throw new CliExit(EXIT.noOutput, `summary: no spanfuse output in ${dir}${from}: no window files (*.pb.gz) and no spans.jsonl`);
    }
    console.log(values.json ? JSON.stringify(s, null, 2) : formatSummary(s, dir));
    return EXIT.ok;
  },
};

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v;
}
