import type { FlatTree, Metric } from './tree.js';

/** Everything a flamegraph page shows; serialized into the page as JSON. */
export interface FlameDocument {
  readonly kind: 'flame' | 'diff';
  readonly title: string;
  /** Lines under the title: selection, samples, spans, windows. */
  readonly details: string[];
  /** Metric the widths follow (index into the series of one side). */
  readonly metric: Metric;
  readonly hasCpu: boolean;
  readonly names: string[];
  readonly files: string[];
  /** Flame: 4 series (samples, wall, cpu, offcpu). Diff: 8 (tail 4, then normal 4), per span. */
  readonly tree: FlatTree;
  /** Diff only: frames that grow most in the tail, per span in the document's metric. */
  readonly growth?: GrowthRow[];
  readonly spanCounts?: { readonly tail: number; readonly normal: number; readonly source: string };
}

export interface GrowthRow {
  readonly name: string;
  readonly file: string;
  /** Self (exclusive) value per tail span and per normal span. */
  readonly tail: number;
  readonly normal: number;
  /** Inclusive value per tail span. */
  readonly tailTotal: number;
  readonly onlyInTail: boolean;
}

/** Keep only the frames a tree uses, renumbered in order of first use. */
export function compactFrames(tree: FlatTree, names: readonly string[], files: readonly string[]): { tree: FlatTree; names: string[]; files: string[] } {
  const map = new Map<number, number>();
  const outNames: string[] = ['all'];
  const outFiles: string[] = [''];
  const frame = tree.frame.map((f) => {
    if (f < 0) return 0;
    let i = map.get(f);
    if (i === undefined) {
      i = outNames.length;
      outNames.push(names[f] ?? '?');
      outFiles.push(files[f] ?? '');
      map.set(f, i);
    }
    return i;
  });
  return { tree: { ...tree, frame }, names: outNames, files: outFiles };
}
