// `protoc` (Debian package protobuf-compiler) as a second, independent reader
// of the bytes our writer produced.
import { spawnSync } from 'node:child_process';

export function hasProtoc(): boolean {
  const r = spawnSync('protoc', ['--version'], { encoding: 'utf8' });
  return r.status === 0;
}

export function protoc(args: string[], input: Uint8Array): string {
  const r = spawnSync('protoc', args, { input, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`protoc ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

/** A node of `protoc --decode_raw` output: field number -> values / children. */
export interface RawNode {
  fields: Map<number, (string | RawNode)[]>;
}

export function parseDecodeRaw(text: string): RawNode {
  const root: RawNode = { fields: new Map() };
  const stack: RawNode[] = [root];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    const top = stack[stack.length - 1];
    if (top === undefined) throw new Error('unbalanced decode_raw output');
    if (line === '}') {
      stack.pop();
      continue;
    }
    const open = /^(\d+) \{$/.exec(line);
    if (open) {
      const child: RawNode = { fields: new Map() };
      const f = Number(open[1]);
      top.fields.set(f, [...(top.fields.get(f) ?? []), child]);
      stack.push(child);
      continue;
    }
    const kv = /^(\d+): (.*)$/.exec(line);
    if (!kv) throw new Error(`unexpected decode_raw line: ${line}`);
    const f = Number(kv[1]);
    top.fields.set(f, [...(top.fields.get(f) ?? []), kv[2] ?? '']);
  }
  return root;
}

export function children(n: RawNode | string | undefined, field: number): RawNode[] {
  if (n === undefined || typeof n === 'string') return [];
  return (n.fields.get(field) ?? []).filter((x): x is RawNode => typeof x !== 'string');
}

export function protocBytes(args: string[], input: Uint8Array): Buffer {
  const r = spawnSync('protoc', args, { input, maxBuffer: 256 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`protoc ${args.join(' ')} failed: ${r.stderr.toString()}`);
  return r.stdout;
}
