import { frameStats, ms, rowValues, selectRows } from '../debug/index.js';
import { FlameError, METRICS } from '../debug/index.js';
import { EXIT_CODES, load, metricOf, parse, runCommand, selectionOf, SELECTION_HELP, SELECTION_OPTIONS } from './flame-common.js';

export const TOP_USAGE = `usage: spanfuse top <files or folder>... [selection] [--limit N]

Prints the hottest frames of the selected samples as a table: self and
total (inclusive) time in the chosen measure, their share, samples and CPU.

selection:
${SELECTION_HELP}
  --limit N          rows to print (default 20)

${EXIT_CODES}`;

export function topCommand(args: string[]): Promise<void> {
  return runCommand('top', () => {
    const { values, positionals } = parse(args, { ...SELECTION_OPTIONS, limit: { type: 'string' } });
    if (values.help === true) {
      console.log(TOP_USAGE);
      return;
    }
    const limit = values.limit === undefined ? 20 : Number(values.limit);
    if (!Number.isSafeInteger(limit) || limit < 1) throw new FlameError('usage', `--limit: expected a whole number from 1, got ${JSON.stringify(values.limit)}`);
    const metric = metricOf(values);
    const loaded = load('top', positionals);
    const picked = selectRows(loaded, selectionOf(values));
    const { store } = loaded;
    const stats = frameStats(
      store,
      picked.rows.map((r) => ({ stack: r.stack, values: rowValues(r, store.windows[r.window]?.hasCpu === true) })),
      4,
    );
    const m = METRICS.indexOf(metric);
    let all = 0;
    for (const r of picked.rows) all += rowValues(r, store.windows[r.window]?.hasCpu === true)[m] ?? 0;
    const fmt = (v: number): string => (metric === 'samples' ? String(Math.round(v)) : ms(v));
    const pct = (v: number): string => (all > 0 ? `${((100 * v) / all).toFixed(1)}%` : '-');
    const rows = [...stats.values()].sort((a, b) => (b.self[m] ?? 0) - (a.self[m] ?? 0)).slice(0, limit);
    console.log(`${picked.what}: ${picked.samples} samples, ${picked.spansWithSamples} spans, ${picked.windows} of ${picked.windowsRead} windows; by self ${metric}`);
    console.log(`${'self'.padStart(10)} ${'self%'.padStart(6)} ${'total'.padStart(10)} ${'total%'.padStart(6)} ${'samples'.padStart(8)} ${'cpu'.padStart(10)}  function (file)`);
    for (const s of rows) {
      const file = store.files[s.frame] ?? '';
      console.log(
        `${fmt(s.self[m] ?? 0).padStart(10)} ${pct(s.self[m] ?? 0).padStart(6)} ${fmt(s.total[m] ?? 0).padStart(10)} ${pct(s.total[m] ?? 0).padStart(6)} ${String(s.self[0] ?? 0).padStart(8)} ${ms(s.self[2] ?? 0).padStart(10)}  ${store.names[s.frame] ?? '?'}${file === '' ? '' : ` (${file})`}`,
      );
    }
  });
}
