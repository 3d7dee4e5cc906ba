import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The repository root (where package.json is), from dist/test/support. */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export interface ChildResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Run `node ...args` (this test's node binary, or `bin`) in the repository
 * root with extra env; resolves when it exits. Killed after `timeoutMs`.
 */
export function runNode(args: string[], env: Record<string, string> = {}, timeoutMs = 60_000, bin = process.execPath): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/**
 * The last line of a fixture's stdout, where fixtures print their figures
 * as JSON, parsed (`{}` when stdout is empty). The caller names its shape.
 */
export function lastJsonLine<T>(stdout: string): T {
  return JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as T;
}

/** Path of a compiled fixture, e.g. `fixture('attribution-app')`. */
export function fixture(name: string): string {
  return fileURLToPath(new URL(`../fixtures/${name}.js`, import.meta.url));
}
