import type { Profile } from './pprof.js';

/** Index of the first sample type named one of `names`, or -1. */
export function sampleTypeIndex(profile: Profile, ...names: string[]): number {
  const strings = profile.stringTable.strings;
  for (const name of names) {
    const i = profile.sampleType.findIndex((t) => strings[Number(t.type)] === name);
    if (i >= 0) return i;
  }
  return -1;
}

/**
 * Where the entry with a given id sits in one of a pprof profile's id-numbered
 * lists (`location`, `function`, `mapping`). spanfuse numbers them 1..n in
 * list order, so an id is found by position without any table; a list
 * numbered otherwise (a profile read from elsewhere) gets a map, built once
 * on the first miss. Window passes use it to look up only the entries their
 * samples name, instead of building a map of every function and location
 * of the window on each pass.
 */
export class IdIndex {
  readonly #list: readonly { readonly id: number | bigint }[];
  #byId: Map<number, number> | undefined;

  constructor(list: readonly { readonly id: number | bigint }[]) {
    this.#list = list;
  }

  /** Position of `id` in the list, or -1. */
  at(id: number): number {
    const list = this.#list;
    if (id >= 1 && id <= list.length && Number(list[id - 1]?.id) === id) return id - 1;
    if (this.#byId === undefined) {
      const byId = new Map<number, number>();
      for (let i = 0; i < list.length; i++) byId.set(Number(list[i]?.id), i);
      this.#byId = byId;
    }
    return this.#byId.get(id) ?? -1;
  }
}

/**
 * A yes or no about the function of each leaf location (the first line of
 * the location: the innermost frame), from its name, worked out once per
 * distinct location asked for: a window pass asks per sample, and a
 * window's samples share few leaves. A location or function not in the
 * profile is a no.
 */
export class LeafFunctionTest {
  readonly #p: Profile;
  readonly #test: (functionName: string) => boolean;
  readonly #locations: IdIndex;
  readonly #functions: IdIndex;
  /** Per location position: 0 not known yet, 1 yes, 2 no. */
  readonly #known: Uint8Array;

  constructor(p: Profile, test: (functionName: string) => boolean) {
    this.#p = p;
    this.#test = test;
    this.#locations = new IdIndex(p.location);
    this.#functions = new IdIndex(p.function);
    this.#known = new Uint8Array(p.location.length);
  }

  has(locationId: number): boolean {
    const at = this.#locations.at(locationId);
    if (at < 0) return false;
    let k = this.#known[at];
    if (k === 0) {
      const line = this.#p.location[at]?.line[0];
      const fn = line === undefined ? undefined : this.#p.function[this.#functions.at(Number(line.functionId))];
      k = fn !== undefined && this.#test(this.#p.stringTable.strings[Number(fn.name)] ?? '') ? 1 : 2;
      this.#known[at] = k;
    }
    return k === 1;
  }
}
