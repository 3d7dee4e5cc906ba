/**
 * Does short-lived data survive scavenges while the code that makes it has
 * not been compiled by TurboFan? Runs bench/gc/tier-workload.js (objects that
 * live for one iteration of ~0.4 ms) with the young generation held at one
 * size (`--max-semi-space-size`, so its growth does not change the
 * picture), under each V8 tier setting, and reports per run the share of
 * what was allocated that outlived a scavenge (V8's `new_space_survived`
 * over `allocated`, from `--trace-gc-nvp`), early and late in the run, and
 * when that share last exceeded 5 %. The settings: V8's defaults (on
 * Node 24 Maglev, V8's mid tier, then TurboFan; Node 20's V8 has no Maglev
 * by default), `--no-maglev`, and `--no-turbofan`.
 *
 * Found on Node 24 (V8 13.6): objects whose constructor gives them
 * closures (as @opentelemetry/api's BaseContext, one per span) outlive
 * scavenges until TurboFan compiles the code that makes them, and Maglev,
 * V8's mid tier, postpones that; under the event-loop bench's span load
 * about a fifth of all allocation outlives scavenges for the first ~5 s, in
 * the OTel-traced control as in spanfuse. Those survivors count toward
 * V8's rule for growing the young generation. See docs/performance.md.
 *
 *   node dist/bench/gc/tier-survival.js [--ms 6000] [--rounds 1] [--node PATH]
 *     [--shapes closures,prototype,otel]
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { median, option, repoRootFrom } from '../args.js';
import { parseScavenges } from './nvp.js';
import type { Scavenge } from './nvp.js';

const repo = repoRootFrom(import.meta.url);
const args = process.argv.slice(2);
const ms = Number(option(args, '--ms', '6000'));
const rounds = Number(option(args, '--rounds', '1'));
const nodeBin = option(args, '--node', join(repo, 'node_modules', 'node', 'bin', 'node'));
const shapes = option(args, '--shapes', 'closures,prototype,otel').split(',');

/** Tier settings: V8's defaults, without its mid tier, without its top tier. */
const tiers: { name: string; flags: string[] }[] = [
  { name: 'V8 defaults', flags: [] },
  { name: '--no-maglev', flags: ['--no-maglev'] },
  { name: '--no-turbofan', flags: ['--no-turbofan'] },
];

function run(shape: string, flags: readonly string[]): Promise<Scavenge[]> {
  const argv = ['--trace-gc-nvp', '--max-semi-space-size=8', ...flags, join(repo, 'dist', 'bench', 'gc', 'tier-workload.js')];
  return new Promise((resolvePromise, reject) => {
    const child = spawn(nodeBin, argv, { env: { ...process.env, TW_SHAPE: shape, TW_MS: String(ms) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err = (err + b.toString()).slice(-2000)));
    child.on('close', (code) => (code === 0 ? resolvePromise(parseScavenges(out)) : reject(new Error(`${shape} ${flags.join(' ')}: exit ${String(code)}\n${err}`))));
  });
}

/** Survived over allocated, in %, for the scavenges in [from, to) ms. */
function share(list: readonly Scavenge[], from: number, to: number): number {
  let survived = 0;
  let allocated = 0;
  for (const s of list) {
    if (s.atMs < from || s.atMs >= to) continue;
    survived += s.survived;
    allocated += s.allocated;
  }
  return allocated > 0 ? (100 * survived) / allocated : Number.NaN;
}

/** When a scavenge (after start-up, 300 ms) last kept more than 5 % of what was allocated before it; 0 if none did. */
function retainedUntil(list: readonly Scavenge[]): number {
  let last = 0;
  for (const s of list) if (s.atMs >= 300 && s.allocated > 0 && s.survived / s.allocated > 0.05) last = s.atMs;
  return last;
}

async function main(): Promise<void> {
  const early = [300, Math.round(ms / 2)] as const;
  const late = [ms - 2000, ms + 1000] as const;
  const lines = [
    `tier-survival: ${rounds} round(s) of ${ms} ms per row, ${nodeBin}, young generation held at --max-semi-space-size=8`,
    'Share of allocation that outlived a scavenge (survived / allocated, %), medians over rounds:',
    `| shape | V8 tiers | ${early[0]}–${early[1]} ms | last 2 s | last scavenge keeping > 5 %, ms |`,
    '|---|---|---|---|---|',
  ];
  for (const shape of shapes) {
    for (const tier of tiers) {
      const runs: Scavenge[][] = [];
      for (let r = 0; r < rounds; r++) runs.push(await run(shape, tier.flags));
      // No scavenge in a range: the optimized loop no longer allocated (or the run was too short).
      const f = (x: number): string => (Number.isNaN(x) ? 'no scavenge' : x.toFixed(1));
      lines.push(
        `| ${shape} | ${tier.name} | ${f(median(runs.map((l) => share(l, ...early))))} | ${f(median(runs.map((l) => share(l, ...late))))} | ${median(runs.map(retainedUntil))} |`,
      );
      process.stderr.write(`${lines[lines.length - 1]}\n`);
    }
  }
  console.log(lines.join('\n'));
}

await main();
