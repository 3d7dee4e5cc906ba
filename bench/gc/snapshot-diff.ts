/**
 * What a heap grew by between two snapshots of one process: self size and
 * count by node type and name (B − A), largest first, then which functions
 * gained optimized code (each optimized Code keeps its function's
 * `SharedFunctionInfoWrapper`s, counted here by function name with digits
 * folded to N).
 *
 *   node dist/bench/gc/snapshot-diff.js A.heapsnapshot B.heapsnapshot [rows]
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  readonly snapshot: {
    readonly meta: {
      readonly node_fields: string[];
      readonly node_types: [string[], ...unknown[]];
      readonly edge_fields: string[];
    };
  };
  readonly nodes: number[];
  readonly edges: number[];
  readonly strings: string[];
}

interface Summary {
  readonly bySelf: Map<string, [number, number]>;
  readonly total: number;
  readonly optimizedFor: Map<string, number>;
}

function summarize(file: string): Summary {
  const s = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const meta = s.snapshot.meta;
  const nf = meta.node_fields.length;
  const types = meta.node_types[0];
  const ti = meta.node_fields.indexOf('type');
  const ni = meta.node_fields.indexOf('name');
  const si = meta.node_fields.indexOf('self_size');
  const ci = meta.node_fields.indexOf('edge_count');
  const ef = meta.edge_fields.length;
  const to = meta.edge_fields.indexOf('to_node');
  const bySelf = new Map<string, [number, number]>();
  const optimizedFor = new Map<string, number>();
  let total = 0;
  let edge = 0;
  for (let i = 0; i < s.nodes.length; i += nf) {
    const type = types[s.nodes[i + ti] as number] ?? '?';
    const name = s.strings[s.nodes[i + ni] as number] ?? '';
    const size = s.nodes[i + si] as number;
    const edges = s.nodes[i + ci] as number;
    total += size;
    const key = `${type} | ${kindName(type, name)}`;
    const row = bySelf.get(key) ?? [0, 0];
    row[0] += size;
    row[1]++;
    bySelf.set(key, row);
    if (name === 'system / SharedFunctionInfoWrapper') {
      for (let e = edge; e < edge + edges * ef; e += ef) {
        const target = s.nodes[(s.edges[e + to] as number) + ni] as number;
        const fn = (s.strings[target] ?? '').replace(/\d+/g, 'N').slice(0, 60);
        optimizedFor.set(fn, (optimizedFor.get(fn) ?? 0) + 1);
      }
    }
    edge += edges * ef;
  }
  return { bySelf, total, optimizedFor };
}

function kindName(type: string, name: string): string {
  if (type === 'string' || type === 'concatenated string' || type === 'sliced string') return '(string)';
  if (type === 'closure') return '(closure)';
  if (type === 'code') return name.startsWith('system /') ? name : `(code${name === '' ? '' : ': ' + name.slice(0, 24)})`;
  return name.slice(0, 48);
}

const [fileA, fileB, rowsArg] = process.argv.slice(2);
if (fileA === undefined || fileB === undefined) {
  console.error('usage: snapshot-diff A.heapsnapshot B.heapsnapshot [rows]');
  process.exit(2);
}
const a = summarize(fileA);
const b = summarize(fileB);
const rows = Number(rowsArg ?? 20);
console.log(`self size: A ${(a.total / 2 ** 20).toFixed(1)} MB, B ${(b.total / 2 ** 20).toFixed(1)} MB`);
const keys = new Set([...a.bySelf.keys(), ...b.bySelf.keys()]);
const diff = [...keys].map((k) => {
  const x = a.bySelf.get(k) ?? [0, 0];
  const y = b.bySelf.get(k) ?? [0, 0];
  return { k, bytes: y[0] - x[0], count: y[1] - x[1] };
});
diff.sort((p, q) => Math.abs(q.bytes) - Math.abs(p.bytes));
for (const d of diff.slice(0, rows)) console.log(`${(d.bytes / 1024).toFixed(0).padStart(9)} KiB ${String(d.count).padStart(8)}  ${d.k}`);
console.log('\nfunction info wrappers (optimized code) by function, B − A:');
const fns = new Set([...a.optimizedFor.keys(), ...b.optimizedFor.keys()]);
const gained = [...fns].map((f) => ({ f, n: (b.optimizedFor.get(f) ?? 0) - (a.optimizedFor.get(f) ?? 0) })).filter((g) => g.n !== 0);
gained.sort((p, q) => Math.abs(q.n) - Math.abs(p.n));
for (const g of gained.slice(0, rows)) console.log(`${String(g.n).padStart(8)}  ${g.f}`);
