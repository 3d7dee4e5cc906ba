import type { Profile } from '../core/pprof.js';

/** Context loss over an output folder, read back from the windows' pprof comments. */
export interface UnattributedSummary {
  /** CPU samples taken while spans were in flight on their thread. */
  readonly inFlightSamples: number;
  /** Of those, samples with no span. */
  readonly samples: number;
  /** samples / inFlightSamples. */
  readonly share: number;
  /** By function (the first app frame from the leaf), share of `samples`. */
  readonly topFunctions: ReadonlyArray<{ readonly name: string; readonly samples: number; readonly share: number }>;
  readonly topStacks: ReadonlyArray<{ readonly stack: string; readonly samples: number }>;
}

const PREFIX = 'profiler.context_loss.';

/** Accumulates the context-loss comments of each window (see src/context-loss). */
export class UnattributedReader {
  #inFlight = 0;
  #lost = 0;
  readonly #functions = new Map<string, number>();
  readonly #stacks = new Map<string, number>();

  add(p: Profile): void {
    for (const i of p.comment) {
      const c = p.stringTable.strings[Number(i)] ?? '';
      if (!c.startsWith(PREFIX)) continue;
      const eq = c.indexOf('=');
      const key = c.slice(PREFIX.length, eq);
      const value = c.slice(eq + 1);
      if (key === 'in_flight_samples') this.#inFlight += Number(value) || 0;
      else if (key === 'unattributed_samples') this.#lost += Number(value) || 0;
      else if (key.startsWith('top_function.')) add(this.#functions, value);
      else if (key.startsWith('top_stack.')) add(this.#stacks, value);
    }
  }

  summary(top: number): UnattributedSummary {
    const lost = this.#lost;
    return {
      inFlightSamples: this.#inFlight,
      samples: lost,
      share: this.#inFlight === 0 ? 0 : round(lost / this.#inFlight),
      topFunctions: sorted(this.#functions, top).map(([name, samples]) => ({ name, samples, share: lost === 0 ? 0 : round(samples / lost) })),
      topStacks: sorted(this.#stacks, top).map(([stack, samples]) => ({ stack, samples })),
    };
  }
}

/** `<name> samples=<n>[ share=<x>]` */
function add(m: Map<string, number>, value: string): void {
  const match = / samples=(\d+)(?: share=[\d.e-]+)?$/.exec(value);
  if (!match) return;
  const name = value.slice(0, match.index);
  m.set(name, (m.get(name) ?? 0) + Number(match[1]));
}

function sorted(m: Map<string, number>, top: number): [string, number][] {
  return [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
}

function round(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}

export function formatUnattributed(u: UnattributedSummary): string[] {
  if (u.inFlightSamples === 0) return [];
  return [
    '',
    `context lost:  ${u.samples} of ${u.inFlightSamples} CPU samples taken while spans were in flight carry no span (${(100 * u.share).toFixed(1)}%)`,
    ...u.topFunctions.map((f) => `  ${f.name.padEnd(28)} ${String(f.samples).padStart(6)} samples  ${(100 * f.share).toFixed(1)}%`),
  ];
}
