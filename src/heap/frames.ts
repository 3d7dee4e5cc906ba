import type { Profile } from '../core/index.js';

// @datadog/pprof names anonymous functions by position; the wall profiler
// adds the column, the heap profiler does not.
const ANONYMOUS_AT = /^\(anonymous:L#(\d+)(?::C#\d+)?\)$/;

/** Frame id of frames with no script (builtins, runtime stubs). */
export const NO_SCRIPT = -1;

/**
 * Turns the stacks of different pprof profiles into comparable frame ids.
 * A frame is identified by function name and script (not by line: the heap
 * profiler reports function start lines, the wall profiler may report sample
 * lines), the same identity @datadog/pprof uses for its function table.
 * Frames without a script are builtins that one profiler shows and the other
 * does not (the heap profiler shows the async resume stub as `(anonymous)`,
 * the wall profiler `runMicrotasks`); they all get NO_SCRIPT.
 */
export class FrameInterner {
  readonly #ids = new Map<string, number>();

  id(key: string): number {
    let id = this.#ids.get(key);
    if (id === undefined) {
      id = this.#ids.size;
      this.#ids.set(key, id);
    }
    return id;
  }

  /** A resolver from a profile's location ids to frame ids, root first per location. */
  resolver(profile: Profile): (locationIds: readonly (number | bigint)[]) => number[] {
    const strings = profile.stringTable.strings;
    const fnKey = new Map<number, number>();
    for (const f of profile.function) {
      const file = strings[Number(f.filename)] ?? '';
      const name = (strings[Number(f.name)] ?? '').replace(ANONYMOUS_AT, '(anonymous:L#$1)');
      fnKey.set(Number(f.id), file === '' ? NO_SCRIPT : this.id(`${name}\u0000${file}`));
    }
    const locFrames = new Map<number, number[]>();
    for (const loc of profile.location) {
      // pprof lists inlined frames callee first, caller last: reverse for root first.
      const frames: number[] = [];
      for (let i = loc.line.length - 1; i >= 0; i--) {
        const fid = fnKey.get(Number(loc.line[i]?.functionId));
        if (fid !== undefined) frames.push(fid);
      }
      locFrames.set(Number(loc.id), frames);
    }
    // Samples list locations leaf first; return root first.
    return (locationIds) => {
      const out: number[] = [];
      for (let i = locationIds.length - 1; i >= 0; i--) {
        const frames = locFrames.get(Number(locationIds[i]));
        if (frames !== undefined) out.push(...frames);
      }
      return out;
    };
  }
}

/** A sample's string label `key`, or undefined. */
export function stringLabel(profile: Profile, sample: Profile['sample'][number], keyIndex: number): string | undefined {
  if (keyIndex <= 0) return undefined;
  for (const l of sample.label) {
    if (Number(l.key) === keyIndex && Number(l.str) !== 0) return profile.stringTable.strings[Number(l.str)];
  }
  return undefined;
}

/** String-table index of `s` in `profile`, or 0 when absent (does not add it). */
export function findString(profile: Profile, s: string): number {
  const i = profile.stringTable.strings.indexOf(s);
  return i < 0 ? 0 : i;
}
