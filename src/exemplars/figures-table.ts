/**
 * Sample figures of one window by span id, in typed arrays.
 *
 * The tail stage keeps a window's figures until the next window closes (a
 * span that ends then may have samples in both), so whatever they are made
 * of survives two scavenges and is promoted. As a Map of objects keyed by id
 * strings that was ~180 KB per window of young-generation survivors under
 * ~2,500 spans/s (`bench/gc/survivors.ts`, Node 24): an object and a hash
 * entry per sampled span, and the id strings they kept from the window's
 * string table. Here a span id is two 32-bit halves in a row of a
 * `Float64Array`, found through an open-addressing index; both arrays live
 * outside the JS heap, which the scavenger never copies. Only ids that are
 * not 16 hex digits (no OpenTelemetry span id) go through a Map.
 */

/** Row layout: id halves, then the figures. */
const HI = 0;
const LO = 1;
const SAMPLES = 2;
const WALL = 3;
const CPU = 4;
const GC = 5;
/** First leaf location id seen (-1: none), and its samples. */
const LEAF = 6;
const LEAF_SAMPLES = 7;
const STRIDE = 8;

const INITIAL_ROWS = 256;

/** Figures of one row, as read back. */
export interface RowFigures {
  samples: number;
  wallNs: number;
  cpuNs: number;
  gcNs: number;
}

export class FiguresTable {
  #rows: Float64Array;
  #count = 0;
  /** Open addressing: row + 1, 0 = empty. Length a power of two, at most half full. */
  #index: Int32Array;
  /** Ids that are not 16 hex digits. */
  #odd: Map<string, number> | undefined;
  /** Row -> other leaf locations -> samples, for rows with more than one leaf. */
  #more: Map<number, Map<number, number>> | undefined;

  constructor(rows = INITIAL_ROWS) {
    const n = Math.max(16, rows);
    this.#rows = new Float64Array(n * STRIDE);
    this.#index = new Int32Array(pow2AtLeast(n * 2));
  }

  /** Distinct ids. */
  get size(): number {
    return this.#count;
  }

  /** Row of `id`, or -1. */
  find(id: string): number {
    const hi = id.length === 16 ? hexHalf(id, 0) : -1;
    const lo = hi < 0 ? -1 : hexHalf(id, 8);
    if (lo < 0) return this.#odd?.get(id) ?? -1;
    return (this.#index[this.#position(hi, lo)] as number) - 1;
  }

  /** Row of `id`, added (all zero) when new and fewer than `max` ids are kept; -1 when full. */
  findOrAdd(id: string, max: number): number {
    const hi = id.length === 16 ? hexHalf(id, 0) : -1;
    const lo = hi < 0 ? -1 : hexHalf(id, 8);
    if (lo < 0) {
      const odd = (this.#odd ??= new Map<string, number>());
      const r = odd.get(id);
      if (r !== undefined) return r;
      if (this.#count >= max) return -1;
      const row = this.#append(-1, -1);
      odd.set(id, row);
      return row;
    }
    const index = this.#index;
    const i = this.#position(hi, lo);
    const r = (index[i] as number) - 1;
    if (r >= 0) return r;
    if (this.#count >= max) return -1;
    const row = this.#append(hi, lo);
    // A grown index already holds the new row.
    if (this.#index === index) index[i] = row + 1;
    return row;
  }

  /** Adds one labelled sample's values to `row`. */
  add(row: number, count: number, wallNs: number, cpuNs: number, leaf: number, gc: boolean): void {
    const rows = this.#rows;
    const at = row * STRIDE;
    rows[at + SAMPLES] = (rows[at + SAMPLES] as number) + count;
    rows[at + WALL] = (rows[at + WALL] as number) + wallNs;
    rows[at + CPU] = (rows[at + CPU] as number) + cpuNs;
    if (gc) rows[at + GC] = (rows[at + GC] as number) + wallNs;
    if (leaf < 0 || count <= 0) return;
    const first = rows[at + LEAF] as number;
    if (first === leaf) rows[at + LEAF_SAMPLES] = (rows[at + LEAF_SAMPLES] as number) + count;
    else if (first < 0) {
      rows[at + LEAF] = leaf;
      rows[at + LEAF_SAMPLES] = count;
    } else {
      const more = (this.#more ??= new Map<number, Map<number, number>>());
      let m = more.get(row);
      if (m === undefined) more.set(row, (m = new Map<number, number>()));
      m.set(leaf, (m.get(leaf) ?? 0) + count);
    }
  }

  /** Adds `row`'s figures to `out`. */
  addTo(row: number, out: RowFigures): void {
    const rows = this.#rows;
    const at = row * STRIDE;
    out.samples += rows[at + SAMPLES] as number;
    out.wallNs += rows[at + WALL] as number;
    out.cpuNs += rows[at + CPU] as number;
    out.gcNs += rows[at + GC] as number;
  }

  /** Calls `fn` with each leaf location id of `row` and its samples. */
  forEachLeaf(row: number, fn: (location: number, samples: number) => void): void {
    const at = row * STRIDE;
    const leaf = this.#rows[at + LEAF] as number;
    if (leaf >= 0) fn(leaf, this.#rows[at + LEAF_SAMPLES] as number);
    const more = this.#more?.get(row);
    if (more !== undefined) for (const [loc, n] of more) fn(loc, n);
  }

  #append(hi: number, lo: number): number {
    const row = this.#count++;
    if ((row + 1) * STRIDE > this.#rows.length) {
      const grown = new Float64Array(this.#rows.length * 2);
      grown.set(this.#rows);
      this.#rows = grown;
    }
    const rows = this.#rows;
    const at = row * STRIDE;
    rows[at + HI] = hi;
    rows[at + LO] = lo;
    rows[at + LEAF] = -1;
    if (this.#count * 2 > this.#index.length) this.#rehash(this.#index.length * 2);
    return row;
  }

  #rehash(length: number): void {
    this.#index = new Int32Array(length);
    const rows = this.#rows;
    for (let r = 0; r < this.#count; r++) {
      const hi = rows[r * STRIDE + HI] as number;
      if (hi >= 0) this.#index[this.#position(hi, rows[r * STRIDE + LO] as number)] = r + 1;
    }
  }

  /** Where in the index the row of (hi, lo) is, or the empty entry where it goes. */
  #position(hi: number, lo: number): number {
    const index = this.#index;
    const rows = this.#rows;
    const mask = index.length - 1;
    let i = hash(hi, lo) & mask;
    for (;;) {
      const r = (index[i] as number) - 1;
      if (r < 0 || (rows[r * STRIDE + HI] === hi && rows[r * STRIDE + LO] === lo)) return i;
      i = (i + 1) & mask;
    }
  }
}

function hash(hi: number, lo: number): number {
  // Span ids are random; mixing the halves is enough.
  return (Math.imul(hi ^ (lo >>> 16), 0x9e3779b1) ^ lo) >>> 0;
}

/** The 32-bit value of the 8 hex digits of `s` at `from`, or -1. */
function hexHalf(s: string, from: number): number {
  let v = 0;
  for (let i = from; i < from + 8; i++) {
    const c = s.charCodeAt(i);
    let d: number;
    if (c >= 48 && c <= 57) d = c - 48;
    else if (c >= 97 && c <= 102) d = c - 87;
    else if (c >= 65 && c <= 70) d = c - 55;
    else return -1;
    v = v * 16 + d;
  }
  return v;
}

function pow2AtLeast(n: number): number {
  let p = 16;
  while (p < n) p *= 2;
  return p;
}
