// What a process made between two heap snapshots and still holds: objects
// of B whose ids are not in A (V8 keeps an object's id across snapshots of
// one process). Between two window closes that is what will outlive the
// next scavenge, the young-generation survivors that make V8 grow its new
// space. Prints the new bytes by type and, for each old object that holds
// new ones, the new objects reachable from it through new objects only
// (each new object counted once, for the first holder found).
//
//   node dist/bench/memory/heap-diff.js A.heapsnapshot B.heapsnapshot [rows]
import { readFileSync } from 'node:fs';

const [fileA, fileB, rowsArg] = process.argv.slice(2);
if (fileA === undefined || fileB === undefined) {
  console.error('usage: node dist/bench/memory/heap-diff.js A.heapsnapshot B.heapsnapshot [rows]');
  process.exit(2);
}
const rows = Number(rowsArg ?? 25);

/** The parts of V8's heap snapshot JSON read here. */
interface Snapshot {
  snapshot: {
    meta: {
      node_fields: string[];
      node_types: [string[], ...unknown[]];
      edge_fields: string[];
      edge_types: [string[], ...unknown[]];
    };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

function fields(snap: Snapshot) {
  const m = snap.snapshot.meta;
  return {
    nf: m.node_fields.length,
    type: m.node_fields.indexOf('type'),
    name: m.node_fields.indexOf('name'),
    id: m.node_fields.indexOf('id'),
    size: m.node_fields.indexOf('self_size'),
    edges: m.node_fields.indexOf('edge_count'),
    nodeTypes: m.node_types[0],
    ef: m.edge_fields.length,
    eType: m.edge_fields.indexOf('type'),
    eName: m.edge_fields.indexOf('name_or_index'),
    eTo: m.edge_fields.indexOf('to_node'),
    edgeTypes: m.edge_types[0],
  };
}

const oldIds = new Set<number>();
{
  const a = JSON.parse(readFileSync(fileA, 'utf8')) as Snapshot;
  const f = fields(a);
  for (let i = 0; i < a.nodes.length; i += f.nf) oldIds.add(a.nodes[i + f.id]!);
}

const b = JSON.parse(readFileSync(fileB, 'utf8')) as Snapshot;
const f = fields(b);
const nodes = b.nodes;
const edges = b.edges;
const count = nodes.length / f.nf;
const isNew = new Uint8Array(count);
const firstEdge = new Uint32Array(count + 1);
for (let k = 0, e = 0; k < count; k++) {
  firstEdge[k] = e;
  e += nodes[k * f.nf + f.edges]! * f.ef;
  firstEdge[k + 1] = e;
  if (!oldIds.has(nodes[k * f.nf + f.id]!)) isNew[k] = 1;
}

const typeOf = (k: number): string => f.nodeTypes[nodes[k * f.nf + f.type]!] ?? '?';
const sizeOf = (k: number): number => nodes[k * f.nf + f.size]!;
const label = (k: number): string => {
  const t = typeOf(k);
  if (t === 'string' || t === 'concatenated string' || t === 'sliced string' || t === 'number' || t === 'bigint') return t;
  return `${t}:${(b.strings[nodes[k * f.nf + f.name]!] ?? '').slice(0, 50)}`;
};
const edgeName = (e: number): string => {
  const t = f.edgeTypes[edges[e + f.eType]!];
  return t === 'element' || t === 'hidden' ? `[${edges[e + f.eName]}]` : (b.strings[edges[e + f.eName]!] ?? '?');
};
const strong = (e: number): boolean => {
  const t = f.edgeTypes[edges[e + f.eType]!];
  return t !== 'weak' && t !== 'shortcut';
};

const byType = new Map<string, [number, number]>();
let total = 0;
for (let k = 0; k < count; k++) {
  if (!isNew[k]) continue;
  const key = label(k);
  const size = sizeOf(k);
  total += size;
  const v = byType.get(key) ?? [0, 0];
  v[0] += size;
  v[1]++;
  byType.set(key, v);
}

const claimed = new Uint8Array(count);
const byHolder = new Map<string, [number, number]>();
for (let k = 0; k < count; k++) {
  if (isNew[k]) continue;
  for (let e = firstEdge[k]!; e < firstEdge[k + 1]!; e += f.ef) {
    const to = edges[e + f.eTo]! / f.nf;
    if (!isNew[to] || claimed[to] || !strong(e)) continue;
    let bytes = 0;
    let objects = 0;
    const stack = [to];
    claimed[to] = 1;
    while (stack.length > 0) {
      const x = stack.pop()!;
      bytes += sizeOf(x);
      objects++;
      for (let e2 = firstEdge[x]!; e2 < firstEdge[x + 1]!; e2 += f.ef) {
        const y = edges[e2 + f.eTo]! / f.nf;
        if (isNew[y] && !claimed[y] && strong(e2)) {
          claimed[y] = 1;
          stack.push(y);
        }
      }
    }
    const key = `${label(k)} -${edgeName(e)}->`;
    const v = byHolder.get(key) ?? [0, 0];
    v[0] += bytes;
    v[1] += objects;
    byHolder.set(key, v);
  }
}

const top = (m: Map<string, [number, number]>): [string, [number, number]][] => [...m].sort((x, y) => y[1][0] - x[1][0]).slice(0, rows);
console.log(`new and live in B: ${(total / 1024).toFixed(1)} KiB in ${[...byType.values()].reduce((s, v) => s + v[1], 0)} objects`);
console.log('\nby type (KiB, objects)');
for (const [k, [bytes, n]] of top(byType)) console.log(`${(bytes / 1024).toFixed(1).padStart(9)} ${String(n).padStart(7)}  ${k}`);
console.log('\nby old holder: new objects reachable through new objects only (KiB, objects)');
for (const [k, [bytes, n]] of top(byHolder)) console.log(`${(bytes / 1024).toFixed(1).padStart(9)} ${String(n).padStart(7)}  ${k}`);
