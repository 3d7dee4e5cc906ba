// Small hand-built profiles whose attribution is known exactly.
import { Function as PFunction, Label, Line, Location, Profile, Sample, StringTable, ValueType } from '../../src/core/index.js';

/** A frame: `name` in `file` ('' = a builtin with no script). */
export type Frame = readonly [name: string, file: string];
export const js = (name: string): Frame => [name, '/app/server.js'];
export const builtin = (name: string): Frame => [name, ''];

class Builder {
  readonly strings = new StringTable();
  readonly functions: PFunction[] = [];
  readonly locations: Location[] = [];
  readonly #loc = new Map<string, number>();

  /** Location ids, leaf first, for a root-first list of frames. */
  stack(frames: readonly Frame[]): number[] {
    return frames
      .map(([name, file]) => {
        const key = `${name}\u0000${file}`;
        let id = this.#loc.get(key);
        if (id === undefined) {
          id = this.locations.length + 1;
          const n = this.strings.dedup(name);
          this.functions.push(new PFunction({ id, name: n, systemName: n, filename: this.strings.dedup(file) }));
          this.locations.push(new Location({ id, line: [new Line({ functionId: id, line: 1 })] }));
          this.#loc.set(key, id);
        }
        return id;
      })
      .reverse();
  }
}

/** A wall profile: each entry is (stack root first, span name or undefined, span id, samples). */
export function wallProfile(entries: readonly { stack: readonly Frame[]; op?: string; span?: string; n: number }[]): Profile {
  const b = new Builder();
  const sampleType = [
    new ValueType({ type: b.strings.dedup('sample'), unit: b.strings.dedup('count') }),
    new ValueType({ type: b.strings.dedup('wall'), unit: b.strings.dedup('nanoseconds') }),
  ];
  const sample = entries.map((e) => {
    const label: Label[] = [];
    if (e.op !== undefined) label.push(new Label({ key: b.strings.dedup('span_name'), str: b.strings.dedup(e.op) }));
    if (e.span !== undefined) label.push(new Label({ key: b.strings.dedup('span_id'), str: b.strings.dedup(e.span) }));
    return new Sample({ locationId: b.stack(e.stack), value: [e.n, e.n * 10_000_000], label });
  });
  return new Profile({
    sampleType,
    sample,
    location: b.locations,
    function: b.functions,
    stringTable: b.strings,
    period: 10_000_000,
  });
}

/** An allocation profile: (stack root first, bytes). */
export function allocProfile(entries: readonly { stack: readonly Frame[]; bytes: number }[]): Profile {
  const b = new Builder();
  const space = new ValueType({ type: b.strings.dedup('alloc_space'), unit: b.strings.dedup('bytes') });
  return new Profile({
    sampleType: [space],
    sample: entries.map((e) => new Sample({ locationId: b.stack(e.stack), value: [e.bytes] })),
    location: b.locations,
    function: b.functions,
    stringTable: b.strings,
    periodType: space,
    period: 524288,
  });
}
