import { spawnSync } from 'node:child_process';

/**
 * Interleaved rounds of fresh child processes, shared by the single-file
 * benchmarks that measure one variant per process (spans, io): in every
 * round each variant runs once, the order rotated by one each round, and
 * the child's last stdout line is its JSON result.
 */
export function runRounds<V extends string, R>(
  rounds: number,
  variants: readonly V[],
  child: (variant: V, round: number) => { readonly args: readonly string[]; readonly env: NodeJS.ProcessEnv },
  node: string,
): Map<V, R[]> {
  const results = new Map<V, R[]>(variants.map((v) => [v, []]));
  for (let r = 0; r < rounds; r++) {
    const order = variants.map((_, i) => variants[(i + r) % variants.length]!);
    for (const v of order) {
      const { args, env } = child(v, r);
      const p = spawnSync(node, args, { env, encoding: 'utf8', timeout: 300_000 });
      if (p.status !== 0) throw new Error(`${v} round ${r} failed (${p.status ?? p.signal}): ${p.stderr}`);
      const line = p.stdout.trim().split('\n').pop() ?? '';
      results.get(v)!.push(JSON.parse(line) as R);
    }
  }
  return results;
}
