/**
 * The scavenges of a `node --trace-gc-nvp` run, shared by the GC benchmarks
 * (bench/gc/scavenges.ts, bench/gc/tier-survival.ts).
 */

export interface Scavenge {
  readonly atMs: number;
  readonly pauseMs: number;
  readonly survived: number;
  readonly promoted: number;
  /** Bytes allocated since the previous collection. */
  readonly allocated: number;
  readonly newSpaceMb: number;
  /** Global handles whose young object died (weak ones: their callbacks ran). */
  readonly handlesDied: number;
  /** Pause on weak global handles: V8's processing plus the embedders' callbacks (ms). */
  readonly weakHandlesMs: number;
}

/** The main isolate's scavenges from `--trace-gc-nvp` output (the isolate with the most of them). */
export function parseScavenges(text: string): Scavenge[] {
  const byIsolate = new Map<string, Scavenge[]>();
  for (const line of text.split('\n')) {
    if (!line.includes('gc=s ')) continue;
    const iso = /^\[\d+:(0x[0-9a-f]+)/.exec(line)?.[1];
    const at = /\s(\d+) ms: /.exec(line)?.[1];
    if (iso === undefined || at === undefined) continue;
    const f = (k: string): number => Number(new RegExp(`\\b${k}=([0-9.]+)`).exec(line)?.[1] ?? 'NaN');
    const list = byIsolate.get(iso) ?? [];
    list.push({
      atMs: Number(at),
      pauseMs: f('pause'),
      survived: f('new_space_survived'),
      promoted: f('promoted'),
      allocated: f('allocated'),
      newSpaceMb: f('new_space_capacity') / 2 ** 20,
      handlesDied: f('nodes_died_in_new'),
      weakHandlesMs: f('scavenge\\.weak_global_handles\\.process') + f('heap\\.external_weak_global_handles'),
    });
    byIsolate.set(iso, list);
  }
  let main: Scavenge[] = [];
  for (const list of byIsolate.values()) if (list.length > main.length) main = list;
  return main;
}
