/**
 * One location-id array per distinct stack of a window. A window's samples
 * repeat a few hundred stacks many times over (a span's hot loop is sampled
 * in the same frames again and again): a 41,700-sample window of the
 * event-loop bench's span load (`--big-window`) had 316 distinct stacks of
 * 9 frames on average, so ~5 MB of arrays, alive while the window is built,
 * encoded and written (and copied by any scavenge in that time), become
 * ~40 KB. Samples that share an array must not change it; nothing in
 * spanfuse changes a sample's stack once built.
 */
export class StackPool {
  /** Stacks by hash; a hash shared by different stacks keeps each of them. */
  readonly #byHash = new Map<number, number[] | number[][]>();
  #scratch = new Float64Array(64);
  #stacks = 0;
  #lookups = 0;

  /** Distinct stacks so far. */
  get size(): number {
    return this.#stacks;
  }

  /** Stacks looked up so far (shared or not). */
  get lookups(): number {
    return this.#lookups;
  }

  /**
   * The shared array for `ids[from..to)`, each id passed through `map`
   * (an id `map` lacks becomes 0, as an unknown location).
   */
  fromPacked(ids: Int32Array, from: number, to: number, map: ReadonlyMap<number, number>): number[] {
    const n = to - from;
    if (this.#scratch.length < n) this.#scratch = new Float64Array(Math.max(n, this.#scratch.length * 2));
    const s = this.#scratch;
    let h = n;
    for (let j = 0; j < n; j++) {
      const id = map.get(ids[from + j] as number) ?? 0;
      s[j] = id;
      h = mix(h, id);
    }
    return this.#intern(s, n, h, undefined);
  }

  /** The shared array equal to `ids`: `ids` itself when it is the first of its stack. */
  of(ids: readonly (number | bigint)[]): number[] {
    const n = ids.length;
    if (this.#scratch.length < n) this.#scratch = new Float64Array(Math.max(n, this.#scratch.length * 2));
    const s = this.#scratch;
    let h = n;
    for (let j = 0; j < n; j++) {
      const id = Number(ids[j]);
      s[j] = id;
      h = mix(h, id);
    }
    return this.#intern(s, n, h, ids);
  }

  #intern(s: Float64Array, n: number, h: number, given: readonly (number | bigint)[] | undefined): number[] {
    this.#lookups++;
    const hit = this.#byHash.get(h);
    if (hit !== undefined) {
      if (hit.length === 0 || typeof hit[0] === 'number') {
        if (same(hit as number[], s, n)) return hit as number[];
      } else {
        const list = hit as number[][];
        for (let k = 0; k < list.length; k++) {
          const a = list[k] as number[];
          if (same(a, s, n)) return a;
        }
      }
    }
    let out: number[];
    if (given !== undefined && same(given, s, n)) {
      out = given as number[];
    } else {
      out = new Array<number>(n);
      for (let j = 0; j < n; j++) out[j] = s[j] as number;
    }
    this.#stacks++;
    if (hit === undefined) this.#byHash.set(h, out);
    else if (hit.length === 0 || typeof hit[0] === 'number') this.#byHash.set(h, [hit as number[], out]);
    else (hit as number[][]).push(out);
    return out;
  }
}

function mix(h: number, id: number): number {
  return Math.imul(h ^ (id | 0), 0x01000193) ^ (h >>> 15);
}

function same(a: readonly (number | bigint)[], s: Float64Array, n: number): boolean {
  if (a.length !== n) return false;
  for (let j = 0; j < n; j++) if (a[j] !== s[j]) return false;
  return true;
}

/** The pool's hash of a stack (exported for tests that need two stacks with one hash). */
export function stackHash(ids: readonly number[]): number {
  let h = ids.length;
  for (let j = 0; j < ids.length; j++) h = mix(h, ids[j] as number);
  return h;
}
