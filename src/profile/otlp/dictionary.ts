import type { ProtoWriter } from './proto-writer.js';

/** Value of an attribute in the attribute table (OTLP AnyValue subset). */
export type DictValue = string | number | boolean | bigint;

interface FunctionRow {
  name: number;
  systemName: number;
  filename: number;
  startLine: number;
}
interface LineRow {
  fn: number;
  line: number;
  column: number;
}
interface LocationRow {
  mapping: number;
  address: number | bigint;
  lines: LineRow[];
  attrs: number[];
}
interface MappingRow {
  memoryStart: number | bigint;
  memoryLimit: number | bigint;
  fileOffset: number | bigint;
  filename: number;
}
interface AttributeRow {
  key: number;
  value: DictValue;
  unit: number;
}
interface LinkRow {
  traceId: Uint8Array;
  spanId: Uint8Array;
}

const ZERO_TRACE = new Uint8Array(16);
const ZERO_SPAN = new Uint8Array(8);

/**
 * The ProfilesDictionary of one request: every table deduplicated, entry 0
 * of each the zero value, so index 0 always means "not set".
 */
export class Dictionary {
  readonly strings: string[] = [''];
  readonly functions: FunctionRow[] = [{ name: 0, systemName: 0, filename: 0, startLine: 0 }];
  readonly locations: LocationRow[] = [{ mapping: 0, address: 0, lines: [], attrs: [] }];
  readonly mappings: MappingRow[] = [{ memoryStart: 0, memoryLimit: 0, fileOffset: 0, filename: 0 }];
  readonly stacks: number[][] = [[]];
  readonly links: LinkRow[] = [{ traceId: ZERO_TRACE, spanId: ZERO_SPAN }];
  readonly attributes: AttributeRow[] = [{ key: 0, value: '', unit: 0 }];

  readonly #stringIdx = new Map<string, number>([['', 0]]);
  readonly #functionIdx = new Map<string, number>();
  readonly #locationIdx = new Map<string, number>();
  readonly #mappingIdx = new Map<string, number>();
  readonly #stackIdx = new Map<string, number>([['', 0]]);
  readonly #linkIdx = new Map<string, number>();
  readonly #attributeIdx = new Map<string, number>();

  string(s: string): number {
    let i = this.#stringIdx.get(s);
    if (i === undefined) {
      i = this.strings.length;
      this.strings.push(s);
      this.#stringIdx.set(s, i);
    }
    return i;
  }

  function(name: string, systemName: string, filename: string, startLine: number): number {
    const row = { name: this.string(name), systemName: this.string(systemName), filename: this.string(filename), startLine };
    return intern(this.#functionIdx, this.functions, `${row.name},${row.systemName},${row.filename},${startLine}`, row);
  }

  mapping(memoryStart: number | bigint, memoryLimit: number | bigint, fileOffset: number | bigint, filename: string): number {
    const row = { memoryStart, memoryLimit, fileOffset, filename: this.string(filename) };
    return intern(this.#mappingIdx, this.mappings, `${memoryStart},${memoryLimit},${fileOffset},${row.filename}`, row);
  }

  location(mapping: number, address: number | bigint, lines: LineRow[], attrs: number[]): number {
    let key = `${mapping},${address};`;
    for (const l of lines) key += `${l.fn}:${l.line}:${l.column},`;
    key += `;${attrs.join(',')}`;
    return intern(this.#locationIdx, this.locations, key, { mapping, address, lines, attrs });
  }

  /** Stack of location indices, leaf first. */
  stack(locations: number[]): number {
    return intern(this.#stackIdx, this.stacks, locations.join(','), locations);
  }

  /** Link from 32-hex trace id and 16-hex span id (validated by the caller). */
  link(traceIdHex: string, spanIdHex: string): number {
    const key = traceIdHex + spanIdHex;
    let i = this.#linkIdx.get(key);
    if (i === undefined) {
      i = this.links.length;
      this.links.push({ traceId: Buffer.from(traceIdHex, 'hex'), spanId: Buffer.from(spanIdHex, 'hex') });
      this.#linkIdx.set(key, i);
    }
    return i;
  }

  attribute(key: string, value: DictValue, unit = ''): number {
    const k = this.string(key);
    const u = unit === '' ? 0 : this.string(unit);
    const dedup = `${k}\u0000${typeof value}\u0000${String(value)}\u0000${u}`;
    return intern(this.#attributeIdx, this.attributes, dedup, { key: k, value, unit: u });
  }

  /** Write as ProfilesDictionary (a sub-message on `field`). */
  write(w: ProtoWriter, field: number): void {
    w.fork(field);
    for (const m of this.mappings) {
      w.fork(1);
      w.varint(1, m.memoryStart);
      w.varint(2, m.memoryLimit);
      w.varint(3, m.fileOffset);
      w.varint(4, m.filename);
      w.join();
    }
    for (const l of this.locations) {
      w.fork(2);
      w.varint(1, l.mapping);
      w.varint(2, l.address);
      for (const line of l.lines) {
        w.fork(3);
        w.varint(1, line.fn);
        w.varint(2, line.line);
        w.varint(3, line.column);
        w.join();
      }
      w.packedVarints(4, l.attrs);
      w.join();
    }
    for (const f of this.functions) {
      w.fork(3);
      w.varint(1, f.name);
      w.varint(2, f.systemName);
      w.varint(3, f.filename);
      w.varint(4, f.startLine);
      w.join();
    }
    for (const l of this.links) {
      w.fork(4);
      w.bytes(1, l.traceId, true);
      w.bytes(2, l.spanId, true);
      w.join();
    }
    for (const s of this.strings) w.string(5, s, true);
    for (const a of this.attributes) {
      w.fork(6);
      w.varint(1, a.key);
      if (a.key !== 0) writeAnyValue(w, 2, a.value);
      w.varint(3, a.unit);
      w.join();
    }
    for (const s of this.stacks) {
      w.fork(7);
      w.packedVarints(1, s);
      w.join();
    }
    w.join();
  }
}

function intern<T>(index: Map<string, number>, table: T[], key: string, row: T): number {
  let i = index.get(key);
  if (i === undefined) {
    i = table.length;
    table.push(row);
    index.set(key, i);
  }
  return i;
}

/** common.v1.AnyValue as a sub-message on `field`. */
export function writeAnyValue(w: ProtoWriter, field: number, v: DictValue): void {
  w.fork(field);
  switch (typeof v) {
    case 'string':
      w.string(1, v, true);
      break;
    case 'boolean':
      w.bool(2, v);
      break;
    case 'bigint':
      w.varintAlways(3, v);
      break;
    default:
      if (Number.isSafeInteger(v)) w.varintAlways(3, v);
      else w.double(4, v);
  }
  w.join();
}
