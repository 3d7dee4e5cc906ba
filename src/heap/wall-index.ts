import { FRAME_GARBAGE_COLLECTION, LABEL_SPAN_ID, LABEL_SPAN_NAME } from '../core/index.js';
import type { Profile } from '../core/index.js';
import { findString, NO_SCRIPT, stringLabel } from './frames.js';
import { sampleTypeIndex } from '../core/profile-index.js';
import type { FrameInterner } from './frames.js';

/** Operation name for wall samples taken outside any span. */
export const NO_SPAN = '(no span)';

/** Where the matched wall samples of one stack were spent, by weight. */
export interface Distribution {
  /** Weight (wall samples) per operation. */
  readonly operations: Map<string, number>;
  /** Weight per span id, for samples inside a span. */
  readonly spans: Map<string, number>;
  readonly total: number;
  /** Heap frames that constrained the match (0 = nothing in common). */
  readonly matchedFrames: number;
}

interface WallStack {
  readonly frames: readonly number[];
  readonly operations: Map<string, number>;
  readonly spans: Map<string, number>;
}

/** Bounds the work per window: the heaviest stacks are kept. */
const MAX_STACKS = 20_000;
const MAX_SPANS_PER_STACK = 256;

const add = (m: Map<string, number>, k: string, w: number): void => {
  m.set(k, (m.get(k) ?? 0) + w);
};

/**
 * The window's wall samples grouped by stack, with an inverted index from
 * frame to the stacks that contain it. Answers: of the wall samples whose
 * stacks contain these frames, which operations and spans were they in?
 */
/** A step of the memoised walk: wall stacks containing every frame so far. */
interface PrefixNode {
  /** Undefined at the root: no constraint yet (and nothing matched). */
  readonly candidates: readonly number[] | undefined;
  readonly depth: number;
  /** Next frame -> node, or null when that frame ends the walk. */
  readonly children: Map<number, PrefixNode | null>;
  /** `candidates` as a set, built when first needed, shared by all children. */
  candidateSet?: Set<number>;
  distribution?: Distribution;
}

export class WallIndex {
  readonly #stacks: WallStack[] = [];
  readonly #byFrame = new Map<number, number[]>();
  readonly #byFrameSet = new Map<number, Set<number>>();
  readonly #root: PrefixNode = { candidates: undefined, depth: 0, children: new Map() };

  constructor(wall: Profile, interner: FrameInterner) {
    const resolve = interner.resolver(wall);
    const weightIdx = Math.max(0, sampleTypeIndex(wall, 'sample', 'samples'));
    const nameKey = findString(wall, LABEL_SPAN_NAME);
    const spanKey = findString(wall, LABEL_SPAN_ID);
    const gcFunctions = new Set(
      wall.function
        .filter((f) => wall.stringTable.strings[Number(f.name)] === FRAME_GARBAGE_COLLECTION)
        .map((f) => Number(f.id)),
    );
    const gcLocations = new Set(
      wall.location.filter((l) => l.line.some((ln) => gcFunctions.has(Number(ln.functionId)))).map((l) => Number(l.id)),
    );
    const byKey = new Map<string, WallStack>();
    for (const sample of wall.sample) {
      const weight = Number(sample.value[weightIdx] ?? 0);
      if (weight <= 0) continue;
      // GC samples sit under a synthetic root, not under the allocating code.
      if (gcLocations.has(Number(sample.locationId[0] ?? 0))) continue;
      const frames = resolve(sample.locationId).filter((f) => f !== NO_SCRIPT);
      const key = frames.join(',');
      let stack = byKey.get(key);
      if (stack === undefined) {
        stack = { frames, operations: new Map(), spans: new Map() };
        byKey.set(key, stack);
      }
      const spanId = stringLabel(wall, sample, spanKey);
      add(stack.operations, stringLabel(wall, sample, nameKey) ?? NO_SPAN, weight);
      if (spanId !== undefined && (stack.spans.size < MAX_SPANS_PER_STACK || stack.spans.has(spanId))) {
        add(stack.spans, spanId, weight);
      }
    }
    let stacks = [...byKey.values()];
    if (stacks.length > MAX_STACKS) {
      const total = (s: WallStack): number => [...s.operations.values()].reduce((a, b) => a + b, 0);
      stacks = stacks.sort((a, b) => total(b) - total(a)).slice(0, MAX_STACKS);
    }
    for (const stack of stacks) {
      const i = this.#stacks.push(stack) - 1;
      for (const f of stack.frames) {
        const list = this.#byFrame.get(f);
        if (list === undefined) this.#byFrame.set(f, [i]);
        else if (list[list.length - 1] !== i) list.push(i); // recursion: once per stack
      }
    }
  }

  get size(): number {
    return this.#stacks.length;
  }

  /**
   * Wall samples consistent with a heap stack (root first). Walking from the
   * root, each frame narrows the candidates to wall stacks that also contain
   * it (as a set: the wall profiler shows inlined frames the heap profiler
   * does not). The walk stops at the first frame that no candidate contains:
   * past it, the heap stack is on a path the wall sampler did not see this
   * window, and deeper frames shared with other paths (a common helper) would
   * only point at the wrong callers. The answer is the distribution over all
   * wall samples below the deepest frames both profiles agree on.
   */
  match(heapFrames: readonly number[]): Distribution {
    // Heap stacks share long prefixes (event loop, framework, handler), so
    // the walk is memoised per prefix: each (prefix, frame) step is computed
    // once per window, and so is the distribution at each prefix.
    let node = this.#root;
    for (const f of heapFrames) {
      if (f === NO_SCRIPT) continue;
      let next = node.children.get(f);
      if (next === undefined) {
        const candidates = this.#narrow(node, f);
        next = candidates === undefined ? null : { candidates, depth: node.depth + 1, children: new Map() };
        node.children.set(f, next);
      }
      if (next === null) break;
      node = next;
    }
    node.distribution ??= this.#distribution(node);
    return node.distribution;
  }

  /** Candidates that also contain frame `f`; undefined when none do. */
  #narrow(node: PrefixNode, f: number): readonly number[] | undefined {
    const candidates = node.candidates;
    const list = this.#byFrame.get(f);
    if (list === undefined) return undefined;
    if (candidates === undefined) return list;
    // Intersect by walking the shorter list and probing the longer one.
    let next: number[];
    if (candidates.length <= list.length) {
      const inList = this.#frameSet(f, list);
      next = candidates.filter((i) => inList.has(i));
    } else {
      node.candidateSet ??= new Set(candidates);
      const inCandidates = node.candidateSet;
      next = list.filter((i) => inCandidates.has(i));
    }
    return next.length === 0 ? undefined : next;
  }

  #frameSet(f: number, list: readonly number[]): Set<number> {
    let set = this.#byFrameSet.get(f);
    if (set === undefined) {
      set = new Set(list);
      this.#byFrameSet.set(f, set);
    }
    return set;
  }

  #distribution(node: PrefixNode): Distribution {
    const operations = new Map<string, number>();
    const spans = new Map<string, number>();
    let total = 0;
    if (node.candidates !== undefined) {
      for (const i of node.candidates) {
        const stack = this.#stacks[i];
        if (stack === undefined) continue;
        for (const [op, w] of stack.operations) {
          add(operations, op, w);
          total += w;
        }
        for (const [id, w] of stack.spans) add(spans, id, w);
      }
    }
    return { operations, spans, total, matchedFrames: node.depth };
  }
}
