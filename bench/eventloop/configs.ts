/**
 * The configurations the event-loop app runs under, and one run of it: shared
 * by bench/eventloop/run.ts (gaps, memory) and bench/gc/scavenges.ts (each
 * scavenge).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keyValues, option } from '../args.js';

export interface AppConfig {
  readonly name: string;
  readonly tracing: 'otel' | 'spanfuse';
  readonly env: Record<string, string>;
  /** Build folder of the spanfuse to preload (default dist). */
  readonly dist?: string;
}

/**
 * The OTel-traced control and spanfuse (with every `--env KEY=VALUE`), one
 * more spanfuse per `--variant KEY=VALUE` (that setting added), and with
 * `--baseline DIR` another build of spanfuse (e.g. a worktree's dist). Each
 * of `more` adds spanfuse, and the baseline, with its settings under its name.
 */
export function appConfigs(args: readonly string[], more: readonly { name: string; env: Record<string, string> }[] = []): AppConfig[] {
  const extraEnv: Record<string, string> = Object.fromEntries(keyValues(args, '--env'));
  const configs: AppConfig[] = [
    { name: 'control (OTel-traced)', tracing: 'otel', env: {} },
    { name: 'spanfuse', tracing: 'spanfuse', env: { ...extraEnv } },
  ];
  for (const [k, v] of keyValues(args, '--variant')) {
    configs.push({ name: `spanfuse ${k}=${v}`, tracing: 'spanfuse', env: { ...extraEnv, [k]: v } });
  }
  const baseline = option(args, '--baseline', '');
  if (baseline !== '') configs.push({ name: `spanfuse (${baseline})`, tracing: 'spanfuse', env: { ...extraEnv }, dist: baseline });
  for (const m of more) {
    configs.push({ name: `spanfuse ${m.name}`, tracing: 'spanfuse', env: { ...extraEnv, ...m.env } });
    if (baseline !== '') configs.push({ name: `spanfuse (${baseline}) ${m.name}`, tracing: 'spanfuse', env: { ...extraEnv, ...m.env }, dist: baseline });
  }
  return configs;
}

/**
 * Run bench/eventloop/app.js once under `c` for `seconds` (its output
 * directory is temporary) and resolve with its stdout; reject with the end
 * of its stderr when it exits non-zero or is killed a minute past its time.
 */
export function runApp(c: AppConfig, o: { repo: string; nodeBin: string; seconds: number; nodeArgs?: readonly string[] }): Promise<string> {
  const out = mkdtempSync(join(tmpdir(), 'spanfuse-el-'));
  const argv = [...(o.nodeArgs ?? [])];
  if (c.tracing === 'spanfuse') argv.push('--import', join(o.repo, c.dist ?? 'dist', 'src', 'register.js'));
  argv.push(join(o.repo, 'dist', 'bench', 'eventloop', 'app.js'));
  return new Promise((resolvePromise, reject) => {
    const child = spawn(o.nodeBin, argv, {
      env: { ...process.env, ...c.env, EL_TRACING: c.tracing, EL_DURATION_MS: String(o.seconds * 1000), SPANFUSE_OUTPUT_DIR: out },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr = (stderr + b.toString()).slice(-4000)));
    const kill = setTimeout(() => child.kill('SIGKILL'), o.seconds * 1000 + 60_000);
    child.on('close', (code) => {
      clearTimeout(kill);
      rmSync(out, { recursive: true, force: true });
      if (code === 0) resolvePromise(stdout);
      else reject(new Error(`${c.name}: exit ${String(code)}\n${stderr}`));
    });
  });
}
