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
  readonly #byHash = new Map<number, number[][]>();
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
    const s = this.#room(n);
    for (let j = 0; j < n; j++) s[j] = map.get(ids[from + j] as number) ?? 0;
    return this.#intern(s, n, undefined);
  }

  /** The shared array equal to `ids`: `ids` itself when it is the first of its stack. */
  of(ids: readonly (number | bigint)[]): number[] {
    const n = ids.length;
    const s = this.#room(n);
    for (let j = 0; j < n; j++) s[j] = Number(ids[j]);
    return this.#intern(s, n, ids);
  }

  #room(n: number): Float64Array {
    if (this.#scratch.length < n) this.#scratch = new Float64Array(Math.max(n, this.#scratch.length * 2));
    return this.#scratch;
  }

  #intern(s: Float64Array, n: number, given: readonly (number | bigint)[] | undefined): number[] {
    this.#lookups++;
    const h = hashOf(s, n);
    const list = this.#byHash.get(h);
    if (list !== undefined) {
      for (let k = 0; k < list.length; k++) {
        const a = list[k] as number[];
        if (same(a, s, n)) return a;
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
    if (list === undefined) this.#byHash.set(h, [out]);
    else list.push(out);
    return out;
  }
}

function hashOf(a: ArrayLike<number>, n: number): number {
  let h = n;
  for (let j = 0; j < n; j++) h = Math.imul(h ^ ((a[j] as number) | 0), 0x01000193) ^ (h >>> 15);
  return h;
}

function same(a: readonly (number | bigint)[], s: Float64Array, n: number): boolean {
  if (a.length !== n) return false;
  for (let j = 0; j < n; j++) if (a[j] !== s[j]) return false;
  return true;
}

/** The pool's hash of a stack (exported for tests that need two stacks with one hash). */
export function stackHash(ids: readonly number[]): number {
  return hashOf(ids, ids.length);
}
