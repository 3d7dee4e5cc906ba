import type { Row, SampleStore } from './model.js';

/** The four measures every frame carries. */
export const METRICS = ['samples', 'wall', 'cpu', 'offcpu'] as const;
export type Metric = (typeof METRICS)[number];

/** Values of one row in METRICS order; off-CPU is wall minus CPU unless the source measured it. */
export function rowValues(r: Row, hasCpu: boolean): [number, number, number, number] {
  const off = r.offNs >= 0 ? r.offNs : hasCpu ? Math.max(0, r.wallNs - r.cpuNs) : 0;
  return [r.samples, r.wallNs, r.cpuNs, off];
}

/**
 * A call tree in preorder, as flat arrays (what the page receives):
 * node i has frame `frame[i]`, depth `depth[i]`, and its subtree ends before
 * `end[i]`; `values[m][i]` is the inclusive total of metric m. Children are
 * ordered by the sort metric, largest first. Node 0 is the root ("all").
 */
export interface FlatTree {
  readonly frame: number[];
  readonly depth: number[];
  readonly end: number[];
  /** One array per series (metrics, or tail/normal in a diff). */
  readonly values: number[][];
}

/**
 * Sums series of values over stacks into a call tree kept in typed arrays
 * (no object per node: a 10^6-node tree stays cheap for the GC). Add each
 * distinct stack once with its summed values when you can (`addStacks`).
 */
export class TreeBuilder {
  readonly #width: number;
  readonly #store: SampleStore;
  readonly #framesKey: number;
  /** (parent node * framesKey + frame) -> child node. */
  readonly #index = new Map<number, number>();
  #frame = new Int32Array(1024);
  #parent = new Int32Array(1024);
  #vals: Float64Array;
  #count = 1;

  constructor(store: SampleStore, series: number) {
    this.#store = store;
    this.#width = series;
    this.#framesKey = store.names.length + 1;
    this.#vals = new Float64Array(1024 * series);
    this.#frame[0] = -1;
    this.#parent[0] = -1;
  }

  add(stack: number, v: ArrayLike<number>, offset = 0): void {
    const frames = this.#store.stacks[stack] ?? [];
    const w = this.#width;
    let n = 0;
    for (let i = 0; i < v.length; i++) this.#vals[offset + i] = (this.#vals[offset + i] ?? 0) + (v[i] ?? 0);
    for (const f of frames) {
      const key = n * this.#framesKey + f;
      let c = this.#index.get(key);
      if (c === undefined) {
        c = this.#grow();
        this.#frame[c] = f;
        this.#parent[c] = n;
        this.#index.set(key, c);
      }
      const base = c * w + offset;
      for (let i = 0; i < v.length; i++) this.#vals[base + i] = (this.#vals[base + i] ?? 0) + (v[i] ?? 0);
      n = c;
    }
  }

  /** Add per-stack sums: `sums[stack * sumsWidth + k]` for k < sumsWidth, at series `offset`. */
  addStacks(sums: Float64Array, sumsWidth: number, offset = 0): void {
    const nStacks = Math.floor(sums.length / sumsWidth);
    for (let s = 0; s < nStacks; s++) {
      const v = sums.subarray(s * sumsWidth, (s + 1) * sumsWidth);
      let any = false;
      for (let k = 0; k < sumsWidth; k++) if (v[k] !== 0) any = true;
      if (any) this.add(s, v, offset);
    }
  }

  #grow(): number {
    const i = this.#count++;
    if (i >= this.#frame.length) {
      const size = this.#frame.length * 2;
      const f = new Int32Array(size);
      f.set(this.#frame);
      this.#frame = f;
      const p = new Int32Array(size);
      p.set(this.#parent);
      this.#parent = p;
      const v = new Float64Array(size * this.#width);
      v.set(this.#vals);
      this.#vals = v;
    }
    return i;
  }

  /** Flatten in preorder; children sorted by series `sortBy` (largest first), then name. */
  flatten(sortBy: number): FlatTree {
    const n = this.#count;
    const w = this.#width;
    const vals = this.#vals;
    const names = this.#store.names;
    // Children lists (CSR) from the parent links.
    const start = new Int32Array(n + 1);
    for (let i = 1; i < n; i++) start[(this.#parent[i] as number) + 1]!++;
    for (let i = 0; i < n; i++) start[i + 1]! += start[i]!;
    const fill = start.slice(0, n);
    const kids = new Int32Array(Math.max(0, n - 1));
    for (let i = 1; i < n; i++) kids[fill[this.#parent[i] as number]!++] = i;
    const out: FlatTree = { frame: new Array<number>(n), depth: new Array<number>(n), end: new Array<number>(n), values: Array.from({ length: w }, () => new Array<number>(n)) };
    const byValue = (a: number, b: number): number =>
      (vals[b * w + sortBy] ?? 0) - (vals[a * w + sortBy] ?? 0) || (names[this.#frame[a] as number] ?? '').localeCompare(names[this.#frame[b] as number] ?? '');
    // Iterative preorder: the stack holds nodes to visit, pushed in reverse order.
    const todo: number[] = [0];
    const depthOf = new Int32Array(n);
    let k = 0;
    while (todo.length > 0) {
      const node = todo.pop()!;
      out.frame[k] = this.#frame[node] as number;
      out.depth[k] = depthOf[node] as number;
      for (let s = 0; s < w; s++) out.values[s]![k] = round(vals[node * w + s] ?? 0);
      k++;
      const from = start[node] as number;
      const to = start[node + 1] as number;
      if (to > from) {
        const list = Array.from(kids.subarray(from, to)).sort(byValue);
        for (let c = list.length - 1; c >= 0; c--) {
          const child = list[c]!;
          depthOf[child] = (depthOf[node] as number) + 1;
          todo.push(child);
        }
      }
    }
    // A subtree ends where the next node at its depth or shallower starts.
    const open: number[] = [];
    for (let i = 0; i < n; i++) {
      const d = out.depth[i]!;
      while (open.length > d) out.end[open.pop()!] = i;
      open.push(i);
    }
    while (open.length > 0) out.end[open.pop()!] = n;
    return out;
  }
}

function round(v: number): number {
  return Number.isInteger(v) ? v : Math.round(v * 1000) / 1000;
}

/** Sum rows' values per stack: `out[stack * 4 + metric]`, each value scaled by `scale`. */
export function sumByStack(store: SampleStore, rows: readonly Row[], scale = 1): Float64Array {
  const out = new Float64Array(store.stacks.length * 4);
  for (const r of rows) {
    const v = rowValues(r, store.windows[r.window]?.hasCpu === true);
    const b = r.stack * 4;
    for (let k = 0; k < 4; k++) out[b + k] = (out[b + k] ?? 0) + (v[k] ?? 0) * scale;
  }
  return out;
}

/** Per-frame self and total (inclusive, counted once per stack even in recursion). */
export interface FrameStat {
  readonly frame: number;
  readonly self: Float64Array;
  readonly total: Float64Array;
}

export function frameStats(store: SampleStore, items: Iterable<{ stack: number; values: ArrayLike<number> }>, width: number): Map<number, FrameStat> {
  const out = new Map<number, FrameStat>();
  const get = (f: number): FrameStat => {
    let s = out.get(f);
    if (s === undefined) {
      s = { frame: f, self: new Float64Array(width), total: new Float64Array(width) };
      out.set(f, s);
    }
    return s;
  };
  const seen = new Set<number>();
  for (const { stack, values } of items) {
    const frames = store.stacks[stack] ?? [];
    if (frames.length === 0) continue;
    seen.clear();
    for (const f of frames) {
      if (seen.has(f)) continue;
      seen.add(f);
      const s = get(f);
      for (let i = 0; i < values.length; i++) s.total[i] = (s.total[i] ?? 0) + (values[i] ?? 0);
    }
    const leaf = get(frames[frames.length - 1]!);
    for (let i = 0; i < values.length; i++) leaf.self[i] = (leaf.self[i] ?? 0) + (values[i] ?? 0);
  }
  return out;
}
