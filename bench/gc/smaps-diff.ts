/**
 * Where a process's resident memory grew, mapping by mapping (Linux): take
 * `/proc/<pid>/smaps` twice, then compare. Mappings are told apart by start
 * address and name; each row says how much of it became resident, and the
 * summary sorts the anonymous mappings into glibc malloc's heaps (the main
 * arena's `[heap]`, and the other arenas' 64 MB-aligned heaps), V8's 256 KB
 * heap pages, executable (JIT code) mappings, and the rest.
 *
 *   node dist/bench/gc/smaps-diff.js snap PID out.json
 *   node dist/bench/gc/smaps-diff.js diff a.json b.json [rows]
 */
import { readFileSync, writeFileSync } from 'node:fs';

interface Mapping {
  readonly start: string;
  readonly end: string;
  readonly perms: string;
  readonly name: string;
  readonly sizeKb: number;
  rssKb: number;
  anonKb: number;
}

const HEADER = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \d+\s*(.*)$/;
const FIELD = /^(Rss|Anonymous):\s+(\d+) kB/;

export function parseSmaps(text: string): Mapping[] {
  const out: Mapping[] = [];
  let cur: Mapping | undefined;
  for (const line of text.split('\n')) {
    const h = HEADER.exec(line);
    if (h !== null) {
      const [, start = '0', end = '0', perms = '', name = ''] = h;
      cur = { start, end, perms, name: name.trim(), sizeKb: Number((BigInt(`0x${end}`) - BigInt(`0x${start}`)) / 1024n), rssKb: 0, anonKb: 0 };
      out.push(cur);
      continue;
    }
    const f = FIELD.exec(line);
    if (f !== null && cur !== undefined) {
      if (f[1] === 'Rss') cur.rssKb = Number(f[2]);
      else cur.anonKb = Number(f[2]);
    }
  }
  return out;
}

const ARENA_ALIGN = 64n << 20n;

/** What an anonymous mapping most likely is, from its shape. */
function kind(m: Mapping): string {
  if (m.name === '[heap]') return 'malloc main arena';
  if (m.name !== '') return m.name.startsWith('[') ? m.name : 'file-backed';
  if (m.perms.includes('x')) return 'executable (JIT code)';
  if (m.perms === 'rw-p' && BigInt(`0x${m.start}`) % ARENA_ALIGN === 0n && m.sizeKb <= 65536) return 'malloc other arenas';
  if (m.perms === 'rw-p' && m.sizeKb === 256) return 'V8 heap pages (regular; large objects fall under other anonymous)';
  return 'other anonymous';
}

function diff(a: readonly Mapping[], b: readonly Mapping[], rows: number): void {
  const before = new Map(a.map((m) => [`${m.start} ${m.name}`, m]));
  const changes: { d: number; m: Mapping; tag: string }[] = [];
  for (const m of b) {
    const key = `${m.start} ${m.name}`;
    const o = before.get(key);
    before.delete(key);
    changes.push({ d: m.rssKb - (o?.rssKb ?? 0), m, tag: o === undefined ? 'new' : '' });
  }
  for (const o of before.values()) changes.push({ d: -o.rssKb, m: o, tag: 'gone' });
  const byKind = new Map<string, [number, number]>();
  for (const { d, m, tag } of changes) {
    const k = kind(m);
    const [sum, size] = byKind.get(k) ?? [0, 0];
    byKind.set(k, [sum + d, size + (tag === 'gone' ? 0 : m.sizeKb)]);
  }
  const total = changes.reduce((s, c) => s + c.d, 0);
  process.stdout.write(`resident change ${total} kB over ${changes.length} mappings\n\n| kind | resident change kB | mapped size at B kB |\n|---|---|---|\n`);
  for (const [k, [d, size]] of [...byKind].sort((x, y) => Math.abs(y[1][0]) - Math.abs(x[1][0]))) {
    process.stdout.write(`| ${k} | ${d >= 0 ? '+' : ''}${d} | ${size} |\n`);
  }
  process.stdout.write('\nlargest changes:\n');
  changes.sort((x, y) => Math.abs(y.d) - Math.abs(x.d));
  for (const { d, m, tag } of changes.slice(0, rows)) {
    process.stdout.write(`${String(d).padStart(7)} kB  ${m.start}-${m.end} ${m.perms} size ${m.sizeKb} kB rss ${m.rssKb} ${kind(m)} ${tag} ${m.name}\n`);
  }
}

const [cmd, x, y, n] = process.argv.slice(2);
if (cmd === 'snap' && x !== undefined && y !== undefined) {
  writeFileSync(y, JSON.stringify(parseSmaps(readFileSync(`/proc/${x}/smaps`, 'utf8'))));
} else if (cmd === 'diff' && x !== undefined && y !== undefined) {
  diff(JSON.parse(readFileSync(x, 'utf8')) as Mapping[], JSON.parse(readFileSync(y, 'utf8')) as Mapping[], Number(n ?? 20));
} else {
  process.stderr.write('usage: smaps-diff.js snap PID out.json | diff a.json b.json [rows]\n');
  process.exitCode = 2;
}
