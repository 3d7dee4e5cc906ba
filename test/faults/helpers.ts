import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { Profile } from '../../src/core/pprof.js';
import { parseWindowFileName } from '../../src/export/index.js';
import { ROOT } from '../support/child.js';

export { ROOT };

export function faultFixture(name: string): string {
  return fileURLToPath(new URL(`./fixtures/${name}.js`, import.meta.url));
}

export function tmp(prefix = 'spanfuse-fault-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface Running {
  readonly child: ChildProcess;
  /** Resolves with the first stdout line matching `re`. */
  line(re: RegExp): Promise<string>;
  /** Resolves when the process ended. */
  readonly done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string; ms: number }>;
}

/** Start `node args` in the repository root with extra env; killed after `timeoutMs`. */
export function startNode(args: string[], env: Record<string, string>, timeoutMs = 60_000): Running {
  return watch(spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }), timeoutMs);
}

function watch(child: ChildProcess, timeoutMs: number): Running {
  const started = Date.now();
  let stdout = '';
  let stderr = '';
  const waiters: { re: RegExp; resolve: (l: string) => void }[] = [];
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
    for (const w of [...waiters]) {
      const m = stdout.split('\n').find((l) => w.re.test(l));
      if (m !== undefined) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  });
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string; ms: number }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started });
    });
  });
  return {
    child,
    done,
    line: (re) =>
      new Promise((resolve, reject) => {
        const m = stdout.split('\n').find((l) => re.test(l));
        if (m !== undefined) return resolve(m);
        waiters.push({ re, resolve });
        void done.then((r) => reject(new Error(`process ended (${r.code ?? r.signal}) before printing ${re}: ${r.stderr}`)));
      }),
  };
}

export interface WindowFiles {
  /** Profile id -> file names of that window. */
  readonly byId: Map<string, string[]>;
  /** Every `.pb.gz` whose gzip or pprof content is broken. */
  readonly broken: string[];
}

/** Every window file in `dir`, each `.pb.gz` fully gunzipped and decoded as pprof. */
export function checkWindows(dir: string): WindowFiles {
  const byId = new Map<string, string[]>();
  const broken: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const parsed = parseWindowFileName(name);
    if (parsed === undefined) continue;
    byId.set(parsed.profileId, [...(byId.get(parsed.profileId) ?? []), name]);
    if (!name.endsWith('.pb.gz')) continue;
    try {
      Profile.decode(gunzipSync(readFileSync(join(dir, name))));
    } catch (err) {
      broken.push(`${name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return { byId, broken };
}

/** Every line of the spans files (`spans.jsonl`, `spans.1.jsonl`), parsed; throws on a broken line. */
export function spanLines(dir: string): { lines: number; names: string[] } {
  const names: string[] = [];
  let lines = 0;
  for (const f of ['spans.1.jsonl', 'spans.jsonl']) {
    let text: string;
    try {
      text = readFileSync(join(dir, f), 'utf8');
    } catch {
      continue;
    }
    if (text !== '' && !text.endsWith('\n')) throw new Error(`${f} does not end with a whole line`);
    for (const [i, line] of text.split('\n').entries()) {
      if (line === '') continue;
      let span: { name?: unknown };
      try {
        span = JSON.parse(line) as { name?: unknown };
      } catch {
        throw new Error(`${f} line ${i + 1} is not JSON: ${line.slice(0, 80)}...`);
      }
      names.push(String(span.name));
      lines++;
    }
  }
  return { lines, names };
}
