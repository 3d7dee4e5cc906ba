/**
 * Scavenge by scavenge: what each young-generation collection of the main
 * isolate paused for, and how many bytes outlived it (copied or promoted),
 * under the event-loop app's span load (bench/eventloop/app.js), the
 * OTel-traced control and spanfuse interleaved round by round.
 *
 * A scavenge's pause grows with what survives it and with the number of
 * @datadog/pprof context holders that died since the last one; what
 * survives feeds V8's decision to grow the young generation (RSS) and,
 * promoted, the old generation. `--list` prints every scavenge of the first
 * round, so survivors can be matched to window closes (every
 * SPANFUSE_WINDOW_MS) and chunk stops.
 *
 * The second table is V8's sizing of the young generation over the whole
 * run (start-up included): V8 doubles it when the bytes that survived
 * scavenges (copied or promoted) since it last grew exceed its capacity.
 * It gives the capacity at the end, when that capacity was reached, how
 * long the generation stayed at the capacity before it and what survived
 * meanwhile (by the rule, just over that capacity in a process that grew:
 * the time says more than the amount), and what survived since: a
 * process whose start-up survivors pass that capacity keeps twice the young
 * generation (twice the RSS for it) for its life. Also per scavenge after
 * start-up: weak handles that died young (@datadog/pprof's context holders)
 * and the pause spent on weak handles (V8's processing plus their
 * callbacks).
 *
 * `--pprof-controls` adds two OTel-traced configurations with
 * @datadog/pprof's wall profiler started by the app and no spanfuse
 * (bench/eventloop/app.ts): `EL_PPROF=only` (no per-span context) and
 * `EL_PPROF=smi` (every span entered with a small integer as its context,
 * as spanfuse's holders label).
 *
 *   node dist/bench/gc/scavenges.js [--rounds 3] [--seconds 32] [--skip-ms 4000]
 *     [--node PATH] [--baseline DIST_DIR] [--env KEY=VALUE ...] [--variant KEY=VALUE ...]
 *     [--pprof-controls] [--list] [--node-arg FLAG ...]
 *
 * `--node-arg FLAG` (repeatable) passes FLAG to node in every configuration
 * (e.g. `--node-arg --no-maglev`).
 */
import { join } from 'node:path';
import { option, options, repoRootFrom } from '../args.js';
import { appConfigs, runApp } from '../eventloop/configs.js';
import type { AppConfig } from '../eventloop/configs.js';
import { median } from '../heap/harness.js';
import { parseScavenges } from './nvp.js';
import type { Scavenge } from './nvp.js';

const repo = repoRootFrom(import.meta.url);
const args = process.argv.slice(2);
const opt = (name: string, def: string): string => option(args, name, def);
const rounds = Number(opt('--rounds', '3'));
const seconds = Number(opt('--seconds', '32'));
const skipMs = Number(opt('--skip-ms', '4000'));
const nodeBin = opt('--node', join(repo, 'node_modules', 'node', 'bin', 'node'));
const nodeFlags = options(args, '--node-arg');
const configs: AppConfig[] = appConfigs(args);
if (args.includes('--pprof-controls')) {
  configs.splice(
    1,
    0,
    { name: 'control + pprof sampler', tracing: 'otel', env: { EL_PPROF: 'only' } },
    { name: 'control + pprof, a small integer per span', tracing: 'otel', env: { EL_PPROF: 'smi' } },
  );
}

/** How V8 sized the young generation over a whole run. */
interface Sizing {
  /** Capacity after the last scavenge (MB). */
  readonly finalMb: number;
  /** When the final capacity was first reported (ms; 0 when it never grew). */
  readonly reachedAtMs: number;
  /** Capacity before the last growth (MB), and what survived while at it (bytes); NaN when it never grew. */
  readonly priorMb: number;
  readonly survivedAtPrior: number;
  /** How long it stayed at that capacity before growing (ms; NaN when it never grew). */
  readonly msAtPrior: number;
  /** What survived at the final capacity after reaching it (bytes; it grows again past the capacity). */
  readonly survivedAtFinal: number;
}

function sizing(all: readonly Scavenge[]): Sizing {
  const finalMb = all.at(-1)?.newSpaceMb ?? 0;
  const first = all.findIndex((s) => s.newSpaceMb === finalMb);
  let survivedAtFinal = 0;
  for (const s of all.slice(Math.max(first, 0) + 1)) survivedAtFinal += s.survived + s.promoted;
  if (first <= 0) return { finalMb, reachedAtMs: 0, priorMb: Number.NaN, survivedAtPrior: Number.NaN, msAtPrior: Number.NaN, survivedAtFinal };
  // The capacity the generation grew from, and the survivors counted against it.
  const priorMb = all[first - 1]?.newSpaceMb ?? Number.NaN;
  let survivedAtPrior = 0;
  for (const s of all.slice(0, first)) if (s.newSpaceMb === priorMb) survivedAtPrior += s.survived + s.promoted;
  // The scavenge that grew it reports the new capacity; its survivors counted too.
  survivedAtPrior += (all[first]?.survived ?? 0) + (all[first]?.promoted ?? 0);
  const reachedAtMs = all[first]?.atMs ?? 0;
  const priorFrom = all.find((s) => s.newSpaceMb === priorMb)?.atMs ?? reachedAtMs;
  return { finalMb, reachedAtMs, priorMb, survivedAtPrior, msAtPrior: reachedAtMs - priorFrom, survivedAtFinal };
}

async function runOnce(c: AppConfig): Promise<Scavenge[]> {
  return parseScavenges(await runApp(c, { repo, nodeBin, seconds, nodeArgs: ['--trace-gc-nvp', ...nodeFlags] }));
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
const kb = (b: number): string => (b / 1024).toFixed(0);
const range = (xs: readonly number[], f: (x: number) => string): string =>
  xs.some(Number.isNaN) ? '–' : `${f(median(xs))} (${f(Math.min(...xs))}–${f(Math.max(...xs))})`;

async function main(): Promise<void> {
  const results = new Map<string, Scavenge[][]>(configs.map((c) => [c.name, []]));
  const sizes = new Map<string, Sizing[]>(configs.map((c) => [c.name, []]));
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? configs : [...configs].reverse();
    for (const c of order) {
      const all = await runOnce(c);
      sizes.get(c.name)?.push(sizing(all));
      const list = all.filter((x) => x.atMs >= skipMs);
      results.get(c.name)?.push(list);
      process.stderr.write(`round ${r + 1} ${c.name}: ${list.length} scavenges, survived median ${kb(median(list.map((s) => s.survived)))} KB\n`);
      if (r === 0 && args.includes('--list')) {
        for (const s of list) {
          process.stdout.write(
            `  ${c.name}: ${String(s.atMs).padStart(6)} ms pause ${s.pauseMs.toFixed(2)} ms survived ${kb(s.survived).padStart(5)} KB promoted ${kb(s.promoted).padStart(5)} KB new space ${s.newSpaceMb} MB\n`,
          );
        }
      }
    }
  }
  console.log(`scavenges bench: ${rounds} interleaved rounds of ${seconds} s (scavenges after ${skipMs} ms), ${nodeBin}${nodeFlags.length > 0 ? ` ${nodeFlags.join(' ')}` : ''}`);
  console.log('Per round: median and mean over its scavenges; the table gives the median of rounds (min–max).');
  console.log(
    '| configuration | scavenges | pause median ms | pause max ms | survived median KB | survived mean KB | promoted mean KB | weak handles died, median | pause on weak handles, median ms |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const [name, lists] of results) {
    const per = (f: (l: Scavenge[]) => number): number[] => lists.map(f);
    console.log(
      `| ${name} | ${range(per((l) => l.length), String)} | ${range(per((l) => median(l.map((s) => s.pauseMs))), (x) => x.toFixed(2))} | ${range(
        per((l) => Math.max(...l.map((s) => s.pauseMs))),
        (x) => x.toFixed(1),
      )} | ${range(per((l) => median(l.map((s) => s.survived))), kb)} | ${range(per((l) => mean(l.map((s) => s.survived))), kb)} | ${range(
        per((l) => mean(l.map((s) => s.promoted))),
        kb,
      )} | ${range(per((l) => median(l.map((s) => s.handlesDied))), (x) => x.toFixed(0))} | ${range(
        per((l) => median(l.map((s) => s.weakHandlesMs))),
        (x) => x.toFixed(2),
      )} |`,
    );
  }
  console.log('');
  console.log('Young generation over the whole run (V8 grows it when what survived since its last growth exceeds its capacity):');
  console.log(
    '| configuration | capacity at end MB | reached at ms | grew from MB | ms at that capacity | survived + promoted at that capacity MB | survived + promoted since, at the end capacity MB |',
  );
  console.log('|---|---|---|---|---|---|---|');
  const mb = (b: number): string => (b / 2 ** 20).toFixed(1);
  for (const [name, list] of sizes) {
    if (list.some((z) => Number.isNaN(z.finalMb))) {
      // Node 20's V8 does not print new_space_capacity.
      console.log(`| ${name} | not reported by this runtime's --trace-gc-nvp | | | | | |`);
      continue;
    }
    const per = (f: (z: Sizing) => number): number[] => list.map(f);
    console.log(
      `| ${name} | ${range(per((z) => z.finalMb), String)} | ${range(per((z) => z.reachedAtMs), String)} | ${range(per((z) => z.priorMb), String)} | ${range(per((z) => z.msAtPrior), String)} | ${range(
        per((z) => z.survivedAtPrior),
        mb,
      )} | ${range(
        per((z) => z.survivedAtFinal),
        mb,
      )} |`,
    );
  }
}

await main();
