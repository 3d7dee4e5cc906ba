/** What the flamegraph commands share: options, input loading with progress, errors, exit codes. */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { FlameError, loadInputs } from '../debug/index.js';
import type { Loaded, Metric, Selection } from '../debug/index.js';

export const EXIT_CODES = `exit codes: 0 done, 1 unexpected failure, 2 bad usage, 3 missing, corrupt, foreign or empty input,
  4 nothing matches the selection (unknown trace, span or operation)`;

export const SELECTION_HELP = `  --trace ID         samples of one trace (32 hex)
  --span ID          samples of one span (16 hex); a local root brings its local subtree
  --operation NAME   an operation: its key as in profiler.tail.operation
                     ("GET /report (SERVER)") or a span name ("GET /report")
  --tail | --normal  only tail spans (profiler.tail.operation label) | only the others
  --cpu | --wall | --offcpu | --samples
                     what widths measure (default wall; off-CPU = wall minus CPU of
                     each sample, or the off_cpu value of an off-CPU profile)`;

export const SELECTION_OPTIONS = {
  trace: { type: 'string' },
  span: { type: 'string' },
  operation: { type: 'string' },
  tail: { type: 'boolean' },
  normal: { type: 'boolean' },
  cpu: { type: 'boolean' },
  wall: { type: 'boolean' },
  offcpu: { type: 'boolean' },
  samples: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

export interface Parsed<V> {
  readonly values: V;
  readonly positionals: string[];
}

/** parseArgs with one-line usage errors. */
export function parse<O extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: O): Parsed<ReturnType<typeof parseArgs<{ options: O; allowPositionals: true; strict: true }>>['values']> {
  try {
    const r = parseArgs({ args, options, allowPositionals: true, strict: true });
    return { values: r.values, positionals: r.positionals };
  } catch (err) {
    throw new FlameError('usage', err instanceof Error ? err.message.split('\n')[0]! : String(err));
  }
}

export function metricOf(v: { cpu?: boolean | undefined; wall?: boolean | undefined; offcpu?: boolean | undefined; samples?: boolean | undefined }): Metric {
  const picked = (['cpu', 'wall', 'offcpu', 'samples'] as const).filter((m) => v[m] === true);
  if (picked.length > 1) throw new FlameError('usage', `--${picked.join(', --')} exclude each other; pick one`);
  return picked[0] ?? 'wall';
}

export function selectionOf(v: { trace?: string | undefined; span?: string | undefined; operation?: string | undefined; tail?: boolean | undefined; normal?: boolean | undefined }): Selection {
  return { traceId: v.trace, spanId: v.span, operation: v.operation, tail: v.tail, normal: v.normal };
}

/** Read the inputs; progress on stderr when there are many windows. */
export function load(command: string, inputs: string[]): Loaded {
  if (inputs.length === 0) throw new FlameError('usage', 'give the output folder or profile files to read');
  let last = 0;
  return loadInputs(inputs, {
    onProgress: (done, total) => {
      if (total < 20) return;
      const now = Date.now();
      if (done < total && now - last < 500) return;
      last = now;
      process.stderr.write(`spanfuse ${command}: read ${done}/${total} windows\n`);
    },
  });
}

export function writeOutput(path: string, text: string): string {
  const abs = resolve(path);
  try {
    writeFileSync(abs, text);
  } catch (err) {
    throw new FlameError('input', `cannot write ${abs} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  return abs;
}

/**
 * Run one command body: FlameError becomes one line on stderr and its exit
 * code; anything else is a bug (exit 1, with the stack).
 */
export async function runCommand(command: string, body: () => void | Promise<void>): Promise<void> {
  try {
    await body();
  } catch (err) {
    if (err instanceof FlameError) {
      process.stderr.write(`spanfuse ${command}: ${err.message}${err.code === 'usage' ? `\n(spanfuse ${command} --help for usage)` : ''}\n`);
      process.exitCode = err.exitCode;
      return;
    }
    process.stderr.write(`spanfuse ${command}: unexpected failure: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  }
}
