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
