/** The flamegraph commands (flame, diff, top, tails) as entries of main.ts's command table. */
import type { Command } from './command.js';
import { diffCommand, DIFF_USAGE } from './diff.js';
import { flameCommand, FLAME_USAGE } from './flame.js';
import { tailsCommand, TAILS_USAGE } from './tails.js';
import { topCommand, TOP_USAGE } from './top.js';

const SUMMARIES: Readonly<Record<string, string>> = {
  flame: 'write a self-contained HTML flamegraph of chosen spans, traces or an operation',
  diff: "write a differential flamegraph: an operation's tail spans against its normal spans",
  top: 'print the hottest frames as a table (same selection as flame)',
  tails: 'list recent tail spans with their figures and the command that draws each',
};

/**
 * Each body prints its own one-line errors and sets `process.exitCode`
 * (2 usage, 3 missing/corrupt/foreign/empty input, 4 nothing matches).
 */
function entry(name: string, usage: string, body: (args: string[]) => Promise<void>): Command {
  return {
    name,
    summary: SUMMARIES[name] ?? '',
    usage,
    run: async (args) => {
      process.exitCode = 0;
      await body(args);
      return typeof process.exitCode === 'number' ? process.exitCode : 0;
    },
  };
}

export const FLAME_COMMANDS: readonly Command[] = [
  entry('flame', FLAME_USAGE, flameCommand),
  entry('diff', DIFF_USAGE, diffCommand),
  entry('top', TOP_USAGE, topCommand),
  entry('tails', TAILS_USAGE, tailsCommand),
];
