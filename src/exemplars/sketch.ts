/**
 * A streaming quantile sketch with a guaranteed relative error, on the
 * logarithmic-bucket design of DDSketch (Masson, Rim, Lee, VLDB 2019): a
 * value v > 0 goes to bucket ceil(log_gamma(v)) with gamma = (1+a)/(1-a), and
 * a bucket answers with 2*gamma^k/(1+gamma), which is within relative error a
 * of every value in it.
 *
 * Why not `@datadog/sketches-js` directly: its quantile query walks every
 * bucket from the lowest (about 1 µs per query with a few hundred buckets,
 * measured in bench/spans/sketch.ts) and tail detection queries once per
 * ended span. Here the one quantile an operation asks for is tracked: `add`
 * keeps the count above its bucket, and a query moves from the previous
 * answer by a bucket or so (amortized O(1)). Any other quantile walks down
 * from the highest bucket over per-block sums (blocks of 32 buckets), at
 * most maxBins/32 + 32 steps. Buckets live in a Float64Array bounded by
 * `maxBins`. When the observed range
 * needs more buckets, the lowest ones collapse into one: high quantiles keep
 * their guarantee, only quantiles inside the collapsed low end lose it.
 *
 * Quantile definition (same as sketches-js): the value of rank
 * floor(q * (n - 1)) of the n observations sorted ascending.
 */
const BLOCK_SHIFT = 5;

function blockCount(bins: number): number {
  return (bins + (1 << BLOCK_SHIFT) - 1) >> BLOCK_SHIFT;
}

export class LogSketch {
  readonly relativeAccuracy: number;
  readonly maxBins: number;
  readonly #gamma: number;
  readonly #lnGamma: number;
  readonly #invLnGamma: number;
  readonly #valueFactor: number;
  #bins: Float64Array | undefined;
  /** Sum of each block of BLOCK buckets of `#bins`. */
  #blocks: Float64Array = new Float64Array(0);
  /** Key of `#bins[0]`. */
  #lo = 0;
  #minKey = 0;
  #maxKey = 0;
  #count = 0;
  #zeroCount = 0;
  #collapsed = 0;
  /**
   * Tracked quantile: the bucket index holding it (-1: the zero bucket) and
   * how many observations lie in buckets above it. Kept in step by `add`,
   * so the next query moves it by a bucket or so instead of searching.
   */
  readonly #tq: number;
  #tIdx = -1;
  #tAbove = 0;
  #tValid = false;
  /** valueOfKey of the tracked bucket, kept while the bucket stays the same. */
  #tValue = 0;
  #tValueIdx = Number.NaN;

  /** Values at or below this (in the caller's unit) count as zero. */
  static readonly MIN_VALUE = 1e-9;

  /**
   * @param trackedQuantile a quantile that `trackedQuantile()` answers in
   *   amortized constant time (tail detection asks the same one per span).
   */
  constructor(relativeAccuracy = 0.01, maxBins = 512, trackedQuantile = Number.NaN) {
    if (!(relativeAccuracy > 0 && relativeAccuracy < 1)) throw new RangeError('relativeAccuracy must be in (0, 1)');
    if (!Number.isInteger(maxBins) || maxBins < 2) throw new RangeError('maxBins must be an integer >= 2');
    this.relativeAccuracy = relativeAccuracy;
    this.maxBins = maxBins;
    this.#gamma = (1 + relativeAccuracy) / (1 - relativeAccuracy);
    this.#lnGamma = Math.log(this.#gamma);
    this.#invLnGamma = 1 / this.#lnGamma;
    this.#valueFactor = 2 / (1 + this.#gamma);
    this.#tq = trackedQuantile;
  }

  /** Observations added so far (zeros included). */
  get count(): number {
    return this.#count;
  }

  /** Observations that were moved into the lowest bucket because of `maxBins`. */
  get collapsed(): number {
    return this.#collapsed;
  }

  /** Bytes held by the bucket and block arrays. */
  get byteLength(): number {
    return (this.#bins?.byteLength ?? 0) + this.#blocks.byteLength;
  }

  add(value: number): void {
    this.#count++;
    if (!(value > LogSketch.MIN_VALUE)) {
      this.#zeroCount++;
      return;
    }
    let key = Math.ceil(Math.log(value) * this.#invLnGamma);
    let bins = this.#bins;
    if (bins === undefined) {
      bins = this.#bins = new Float64Array(Math.min(32, this.maxBins));
      this.#blocks = new Float64Array(blockCount(bins.length));
      this.#lo = key - (bins.length >> 1);
      this.#minKey = key;
      this.#maxKey = key;
    } else if (key < this.#lo && bins.length === this.maxBins && this.#lo + this.maxBins - 1 <= this.#maxKey) {
      // Full and anchored at the top: a low value joins the lowest bucket
      // without any re-layout (the common case once collapsing began).
      key = this.#lo;
      this.#collapsed++;
    } else if (key < this.#lo || key >= this.#lo + bins.length) {
      key = this.#fit(key);
      bins = this.#bins!;
    }
    const i = key - this.#lo;
    bins[i]! += 1;
    this.#blocks[i >> BLOCK_SHIFT]! += 1;
    if (i > this.#tIdx) this.#tAbove++;
    if (key > this.#maxKey) this.#maxKey = key;
    if (key < this.#minKey) this.#minKey = key;
  }

  /**
   * Value at quantile `q` in [0, 1], within `relativeAccuracy` of the exact
   * one; NaN when empty.
   */
  quantile(q: number): number {
    const n = this.#count;
    if (n === 0) return Number.NaN;
    const rank = Math.floor(q * (n - 1));
    const above = n - 1 - rank;
    const bins = this.#bins;
    if (bins === undefined) return 0;
    const blocks = this.#blocks;
    const lo = this.#lo;
    const iMin = this.#minKey - lo;
    let i = this.#maxKey - lo;
    let acc = 0;
    while (i >= iMin) {
      const b = i >> BLOCK_SHIFT;
      const inBlock = blocks[b]!;
      if (acc + inBlock > above) {
        // The quantile is in this block: walk its buckets down from i.
        for (;;) {
          acc += bins[i]!;
          if (acc > above) return this.valueOfKey(i + lo);
          i--;
        }
      }
      acc += inBlock;
      i = (b << BLOCK_SHIFT) - 1;
    }
    return 0;
  }

  /**
   * The quantile given to the constructor, same answer as
   * `quantile(trackedQuantile)`, from the position of the previous answer.
   */
  trackedQuantile(): number {
    const n = this.#count;
    const q = this.#tq;
    if (n === 0 || Number.isNaN(q)) return Number.NaN;
    const bins = this.#bins;
    if (bins === undefined) return 0;
    const need = n - 1 - Math.floor(q * (n - 1));
    if (!this.#tValid) this.#seek(need);
    const lo = this.#lo;
    const top = this.#maxKey - lo;
    const bottom = this.#minKey - lo;
    let idx = this.#tIdx;
    let above = this.#tAbove;
    // Too many above: the quantile moved up to a higher non-empty bucket.
    while (above > need) {
      let j = idx + 1;
      while (j < top && bins[j] === 0) j++;
      above -= bins[j]!;
      idx = j;
    }
    // Not enough at or above: it moved down.
    while (above + (idx < 0 ? this.#zeroCount : bins[idx]!) <= need) {
      above += idx < 0 ? this.#zeroCount : bins[idx]!;
      let j = idx - 1;
      while (j >= bottom && bins[j] === 0) j--;
      idx = j < bottom ? -1 : j;
    }
    this.#tIdx = idx;
    this.#tAbove = above;
    if (idx !== this.#tValueIdx) {
      this.#tValueIdx = idx;
      this.#tValue = idx < 0 ? 0 : this.valueOfKey(idx + lo);
    }
    return this.#tValue;
  }

  /** Place the tracked position by a search from the top (after a re-layout). */
  #seek(need: number): void {
    const bins = this.#bins!;
    let acc = 0;
    let idx = -1;
    for (let i = this.#maxKey - this.#lo; i >= this.#minKey - this.#lo; i--) {
      const c = bins[i]!;
      if (c === 0) continue;
      if (acc + c > need) {
        idx = i;
        break;
      }
      acc += c;
    }
    this.#tIdx = idx;
    this.#tAbove = acc;
    this.#tValid = true;
  }

  /**
   * Multiply every count by `factor` in (0, 1]: older observations weigh
   * less than the ones that follow (exponential decay). Ranks become
   * weighted; the relative-error guarantee holds for the weighted quantile.
   */
  scale(factor: number): void {
    if (!(factor > 0 && factor <= 1) || factor === 1) return;
    this.#count *= factor;
    this.#zeroCount *= factor;
    const bins = this.#bins;
    if (bins === undefined) return;
    for (let i = 0; i < bins.length; i++) bins[i]! *= factor;
    // Sums rebuilt from the scaled buckets, and the tracked position found
    // again, so no rounding drift between the two.
    this.#rebuildBlocks();
  }

  /** Representative value of bucket `key`. */
  valueOfKey(key: number): number {
    return Math.exp(key * this.#lnGamma) * this.#valueFactor;
  }

  #rebuildBlocks(): void {
    this.#tValid = false;
    this.#tValueIdx = Number.NaN;
    const bins = this.#bins!;
    const blocks = new Float64Array(blockCount(bins.length));
    for (let i = 0; i < bins.length; i++) blocks[i >> BLOCK_SHIFT]! += bins[i]!;
    this.#blocks = blocks;
  }

  /** Make room for `key`; returns the key to count it under (it moves up when collapsed). */
  #fit(key: number): number {
    const old = this.#bins!;
    const oldLo = this.#lo;
    const newMin = Math.min(this.#minKey, key);
    const newMax = Math.max(this.#maxKey, key);
    const span = newMax - newMin + 1;
    if (span <= this.maxBins) {
      const cap = Math.min(this.maxBins, Math.max(old.length * 2, span));
      const lo = newMin - ((cap - span) >> 1);
      const next = new Float64Array(cap);
      for (let k = this.#minKey; k <= this.#maxKey; k++) next[k - lo] = old[k - oldLo]!;
      this.#bins = next;
      this.#lo = lo;
      this.#rebuildBlocks();
      return key;
    }
    // Collapse the lowest buckets into the lowest one that still fits.
    const lo = newMax - this.maxBins + 1;
    const next = old.length === this.maxBins ? old : new Float64Array(this.maxBins);
    const moved = new Float64Array(this.maxBins);
    for (let k = this.#minKey; k <= this.#maxKey; k++) {
      const c = old[k - oldLo]!;
      if (c === 0) continue;
      if (k < lo) this.#collapsed += c;
      moved[Math.max(k, lo) - lo]! += c;
    }
    next.set(moved);
    this.#bins = next;
    this.#lo = lo;
    this.#minKey = Math.max(newMin, lo);
    this.#rebuildBlocks();
    if (key < lo) {
      this.#collapsed++;
      return lo;
    }
    return key;
  }
}
