/**
 * What every `spanfuse` subcommand is: a name, its usage text and a function
 * that returns the process exit status. main.ts holds the table of them.
 */
export interface Command {
  readonly name: string;
  /** One line for the overview of `spanfuse --help`. */
  readonly summary: string;
  /** The full text of `spanfuse <name> --help`. */
  readonly usage: string;
  run(args: string[]): Promise<number> | number;
}

/** Exit statuses of the `spanfuse` command (README "Command line"). */
export const EXIT = {
  ok: 0,
  /** Something failed inside spanfuse (a bug or an I/O error): the message says what. */
  internal: 1,
  /** Bad command line or configuration: unknown command or option, extra arguments, bad values. */
  usage: 2,
  /** The folder holds no spanfuse output (missing, empty, or only other files). */
  noOutput: 3,
} as const;

/** A mistake on the command line: printed as one line with a `--help` hint, exit status 2. */
export class UsageError extends Error {
  /** The command whose `--help` the hint names (undefined: the top level). */
  readonly command: string | undefined;
  constructor(message: string, command?: string) {
    super(message);
    this.name = 'UsageError';
    this.command = command;
  }
}

/** A failure with a chosen exit status and a one-line message. */
export class CliExit extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'CliExit';
    this.status = status;
  }
}

/** `parseArgs` errors (unknown option, missing value ...) carry a code starting with ERR_PARSE_ARGS. */
export function isParseArgsError(err: unknown): err is Error {
  return err instanceof Error && 'code' in err && String((err as { code: unknown }).code).startsWith('ERR_PARSE_ARGS');
}

/** `--help`/`-h` anywhere before `--`. */
export function wantsHelp(args: readonly string[]): boolean {
  for (const a of args) {
    if (a === '--') return false;
    if (a === '--help' || a === '-h') return true;
  }
  return false;
}
