/** The flamegraph commands, for main.ts's dispatch. */
import { diffCommand, DIFF_USAGE } from './diff.js';
import { flameCommand, FLAME_USAGE } from './flame.js';
import { tailsCommand, TAILS_USAGE } from './tails.js';
import { topCommand, TOP_USAGE } from './top.js';

export const FLAME_COMMANDS: Readonly<Record<string, (args: string[]) => Promise<void>>> = {
  flame: flameCommand,
  diff: diffCommand,
  top: topCommand,
  tails: tailsCommand,
};

/** First lines of each command's usage, for the main help. */
export const FLAME_COMMANDS_USAGE = [FLAME_USAGE, DIFF_USAGE, TOP_USAGE, TAILS_USAGE]
  .map((u) => `  ${u.split('\n')[0]!.replace(/^usage: /, '')}`)
  .join('\n');
