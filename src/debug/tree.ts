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

interface Node {
  readonly frame: number;
  readonly values: Float64Array;
  children: Map<number, Node> | undefined;
}

/**
 * Sums series of values over stacks. `series` values are added per row by
 * `add(row, into)`; e.g. a diff adds tail rows to series 0-3 and normal rows to 4-7.
 */
export class TreeBuilder {
  readonly #root: Node;
  readonly #width: number;
  readonly #store: SampleStore;

  constructor(store: SampleStore, series: number) {
    this.#store = store;
    this.#width = series;
    this.#root = { frame: -1, values: new Float64Array(series), children: undefined };
  }

  add(stack: number, v: ArrayLike<number>, offset = 0): void {
    const frames = this.#store.stacks[stack] ?? [];
    let n = this.#root;
    this.#bump(n, v, offset);
    for (const f of frames) {
      n.children ??= new Map();
      let c = n.children.get(f);
      if (c === undefined) {
        c = { frame: f, values: new Float64Array(this.#width), children: undefined };
        n.children.set(f, c);
      }
      this.#bump(c, v, offset);
      n = c;
    }
  }

  #bump(n: Node, v: ArrayLike<number>, offset: number): void {
    for (let i = 0; i < v.length; i++) n.values[offset + i] = (n.values[offset + i] ?? 0) + (v[i] ?? 0);
  }

  /** Flatten; children sorted by series `sortBy`, then name. */
  flatten(sortBy: number): FlatTree {
    const out: FlatTree = { frame: [], depth: [], end: [], values: Array.from({ length: this.#width }, () => []) };
    const names = this.#store.names;
    const walk = (n: Node, depth: number): void => {
      const i = out.frame.length;
      out.frame.push(n.frame);
      out.depth.push(depth);
      out.end.push(0);
      for (let s = 0; s < this.#width; s++) out.values[s]!.push(round(n.values[s] ?? 0));
      if (n.children !== undefined) {
        const kids = [...n.children.values()].sort(
          (a, b) => (b.values[sortBy] ?? 0) - (a.values[sortBy] ?? 0) || (names[a.frame] ?? '').localeCompare(names[b.frame] ?? ''),
        );
        for (const c of kids) walk(c, depth + 1);
      }
      out.end[i] = out.frame.length;
    };
    walk(this.#root, 0);
    return out;
  }
}

function round(v: number): number {
  return Number.isInteger(v) ? v : Math.round(v * 1000) / 1000;
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
