// Shared by the flamegraph CLI and browser tests: one real profiled run of
// the tail-burn fixture per test file, and the `spanfuse` CLI as a child.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT, runNode } from '../support/child.js';
import type { ChildResult } from '../support/child.js';

export const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');
export const TAIL_APP = fileURLToPath(new URL('../debug/fixtures/tail-burn-app.js', import.meta.url));
export const OPERATION = 'GET /checkout (SERVER)';

/** Run the fixture into a fresh folder: 1 ms sampling, 500 ms windows, pprof and OTLP files, 25 ms tail budget. */
export async function profiledRun(env: Record<string, string> = {}): Promise<{ dir: string; run: ChildResult }> {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-flame-'));
  const run = await runNode([TAIL_APP], {
    SPANFUSE_OUTPUT_DIR: dir,
    SPANFUSE_SAMPLING_INTERVAL_US: '1000',
    SPANFUSE_WINDOW_MS: '500',
    SPANFUSE_FILE_FORMATS: 'pprof,otlp',
    SPANFUSE_TAIL_THRESHOLD_MS: '25',
    SPANFUSE_HEAP_ENABLED: 'false',
    ...env,
  });
  return { dir, run };
}

export function cli(args: string[], timeoutMs = 120_000): Promise<ChildResult> {
  return runNode([CLI, ...args], {}, timeoutMs);
}

/** Where tests leave pages and screenshots for humans. */
export function outputDir(): string {
  return join(ROOT, 'dist', 'test-output', 'flame');
}
