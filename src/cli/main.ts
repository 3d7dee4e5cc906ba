#!/usr/bin/env node
/**
 * The `spanfuse` command: a table of subcommands (command.ts), each with its
 * own `--help`. Errors are one line with a `--help` hint; exit statuses are
 * in command.ts (EXIT) and the README.
 */
import { ConfigError, VERSION } from '../index.js';
import type { Command } from './command.js';
import { CliExit, EXIT, isParseArgsError, UsageError, wantsHelp } from './command.js';
import { demoCommand } from './demo-command.js';
import { summaryCommand } from './summary-command.js';
import { FLAME_COMMANDS } from './flame-commands.js';

/** Every subcommand, in the order `--help` lists them. */
const COMMANDS: readonly Command[] = [demoCommand, summaryCommand, ...FLAME_COMMANDS];

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return `spanfuse ${VERSION}

usage: spanfuse <command> [options]     (spanfuse <command> --help for its options)

commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}
  ${'help'.padEnd(width)}  this text (also -h, --help)
  ${'version'.padEnd(width)}  print the version (also -v, --version)

Profiling your own app: node --import spanfuse/register app.js
Configuration: OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, SPANFUSE_* (docs/configuration.md).
exit status: 0 ok, 1 failure inside spanfuse, 2 bad command line or configuration, 3 no spanfuse output found`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    if (name === 'help' && rest[0] !== undefined) return help(rest[0]);
    console.log(usage());
    return EXIT.ok;
  }
  if (name === 'version' || name === '--version' || name === '-v') {
    if (rest.length > 0) throw new UsageError(`${name} takes no arguments`);
    console.log(VERSION);
    return EXIT.ok;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (command === undefined) {
    throw new UsageError(name.startsWith('-') ? `unknown option ${JSON.stringify(name)}` : `unknown command ${JSON.stringify(name)}`);
  }
  if (wantsHelp(rest)) {
    console.log(command.usage);
    return EXIT.ok;
  }
  try {
    return await command.run(rest);
  } catch (err) {
    // Name the command in the hint for its own option errors.
    if (isParseArgsError(err)) throw new UsageError(err.message, command.name);
    throw err;
  }
}

function help(name: string): number {
  const command = COMMANDS.find((c) => c.name === name);
  if (command === undefined) throw new UsageError(`unknown command ${JSON.stringify(name)}`);
  console.log(command.usage);
  return EXIT.ok;
}

/** `spanfuse: <message>` once, whatever the message already starts with. */
function line(message: string): string {
  const m = message.replace(/^spanfuse:\s*/, '');
  return `spanfuse: ${m}`;
}

main(process.argv.slice(2)).then(
  (status) => {
    process.exitCode = status;
  },
  (err: unknown) => {
    if (err instanceof UsageError) {
      console.error(`${line(err.message)} (see: spanfuse ${err.command === undefined ? '' : `${err.command} `}--help)`);
      process.exitCode = EXIT.usage;
    } else if (isParseArgsError(err)) {
      console.error(`${line(err.message)} (see: spanfuse --help)`);
      process.exitCode = EXIT.usage;
    } else if (err instanceof ConfigError) {
      // One problem per line: the list is the message.
      console.error(line(err.message));
      process.exitCode = EXIT.usage;
    } else if (err instanceof CliExit) {
      console.error(line(err.message));
      process.exitCode = err.status;
    } else {
      console.error(line(`internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`));
      process.exitCode = EXIT.internal;
    }
  },
);
