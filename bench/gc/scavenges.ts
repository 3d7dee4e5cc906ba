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
 *   node dist/bench/gc/scavenges.js [--rounds 3] [--seconds 32] [--skip-ms 4000]
 *     [--node PATH] [--baseline DIST_DIR] [--env KEY=VALUE ...] [--variant KEY=VALUE ...] [--list]
 */
import { join } from 'node:path';
import { option, repoRootFrom } from '../args.js';
import { appConfigs, runApp } from '../eventloop/configs.js';
import type { AppConfig } from '../eventloop/configs.js';
import { median } from '../heap/harness.js';

interface Scavenge {
  readonly atMs: number;
  readonly pauseMs: number;
  readonly survived: number;
  readonly promoted: number;
  readonly newSpaceMb: number;
}

const repo = repoRootFrom(import.meta.url);
const args = process.argv.slice(2);
const opt = (name: string, def: string): string => option(args, name, def);
const rounds = Number(opt('--rounds', '3'));
const seconds = Number(opt('--seconds', '32'));
const skipMs = Number(opt('--skip-ms', '4000'));
const nodeBin = opt('--node', join(repo, 'node_modules', 'node', 'bin', 'node'));
const configs: AppConfig[] = appConfigs(args);

/** The main isolate's scavenges from `--trace-gc-nvp` output (the isolate with the most of them). */
function parseScavenges(text: string, fromMs: number): Scavenge[] {
  const byIsolate = new Map<string, Scavenge[]>();
  for (const line of text.split('\n')) {
    if (!line.includes('gc=s ')) continue;
    const iso = /^\[\d+:(0x[0-9a-f]+)/.exec(line)?.[1];
    const at = /\s(\d+) ms: /.exec(line)?.[1];
    if (iso === undefined || at === undefined) continue;
    const f = (k: string): number => Number(new RegExp(`\\b${k}=([0-9.]+)`).exec(line)?.[1] ?? 'NaN');
    const list = byIsolate.get(iso) ?? [];
    list.push({ atMs: Number(at), pauseMs: f('pause'), survived: f('new_space_survived'), promoted: f('promoted'), newSpaceMb: f('new_space_capacity') / 2 ** 20 });
    byIsolate.set(iso, list);
  }
  let main: Scavenge[] = [];
  for (const list of byIsolate.values()) if (list.length > main.length) main = list;
  return main.filter((s) => s.atMs >= fromMs);
}

async function runOnce(c: AppConfig): Promise<Scavenge[]> {
  return parseScavenges(await runApp(c, { repo, nodeBin, seconds, nodeArgs: ['--trace-gc-nvp'] }), skipMs);
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
const kb = (b: number): string => (b / 1024).toFixed(0);
const range = (xs: readonly number[], f: (x: number) => string): string => `${f(median(xs))} (${f(Math.min(...xs))}–${f(Math.max(...xs))})`;

async function main(): Promise<void> {
  const results = new Map<string, Scavenge[][]>(configs.map((c) => [c.name, []]));
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? configs : [...configs].reverse();
    for (const c of order) {
      const list = await runOnce(c);
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
  console.log(`scavenges bench: ${rounds} interleaved rounds of ${seconds} s (scavenges after ${skipMs} ms), ${nodeBin}`);
  console.log('Per round: median and mean over its scavenges; the table gives the median of rounds (min–max).');
  console.log('| configuration | scavenges | pause median ms | pause max ms | survived median KB | survived mean KB | promoted mean KB |');
  console.log('|---|---|---|---|---|---|---|');
  for (const [name, lists] of results) {
    const per = (f: (l: Scavenge[]) => number): number[] => lists.map(f);
    console.log(
      `| ${name} | ${range(per((l) => l.length), String)} | ${range(per((l) => median(l.map((s) => s.pauseMs))), (x) => x.toFixed(2))} | ${range(
        per((l) => Math.max(...l.map((s) => s.pauseMs))),
        (x) => x.toFixed(1),
      )} | ${range(per((l) => median(l.map((s) => s.survived))), kb)} | ${range(per((l) => mean(l.map((s) => s.survived))), kb)} | ${range(
        per((l) => mean(l.map((s) => s.promoted))),
        kb,
      )} |`,
    );
  }
}

await main();
