import { flameDocument, renderHtml } from '../debug/index.js';
import { EXIT_CODES, load, metricOf, parse, runCommand, selectionOf, SELECTION_HELP, SELECTION_OPTIONS, writeOutput } from './flame-common.js';

export const FLAME_USAGE = `usage: spanfuse flame <files or folder>... [selection] [-o out.html]

Writes a self-contained HTML flamegraph (no network) of the selected samples:
click a frame to zoom, search by name, hover for self/total, CPU vs wall,
samples and share. Reads spanfuse output folders (wall *.pb.gz, *.otlp.pb),
single pprof files (gzip or plain, also from other tools) and OTLP files.

selection:
${SELECTION_HELP}
  -o, --out FILE     where to write the page (default spanfuse-flame.html)

${EXIT_CODES}`;

export function flameCommand(args: string[]): Promise<void> {
  return runCommand('flame', () => {
    const { values, positionals } = parse(args, { ...SELECTION_OPTIONS, out: { type: 'string', short: 'o' } });
    if (values.help === true) {
      console.log(FLAME_USAGE);
      return;
    }
    const metric = metricOf(values);
    const loaded = load('flame', positionals);
    const doc = flameDocument(loaded, selectionOf(values), metric);
    const path = writeOutput(values.out ?? 'spanfuse-flame.html', renderHtml(doc));
    console.log(`${path}\n  ${doc.title}: ${doc.details.join('; ')}`);
  });
}
