import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface LoadResult {
  readonly requests: number;
  readonly errors: number;
  readonly byRoute: Record<string, number>;
}

export interface LoadOptions {
  readonly port: number;
  readonly routes: readonly string[];
  readonly durationMs: number;
  readonly concurrency: number;
  readonly maxRequests?: number;
}

const CHILD = fileURLToPath(new URL('./load-child.js', import.meta.url));

/**
 * The demo's load (load-child.ts) in a child process of its own, not
 * profiled, as a service's clients would be. Run in the profiled thread, the
 * clients' own code (request writes, response parsing) was sampled outside
 * every server span while spans were in flight, and the summary counted it
 * as context loss.
 */
export function driveLoad(opts: LoadOptions): Promise<LoadResult> {
  return new Promise<LoadResult>((resolve, reject) => {
    const child = fork(CHILD, [JSON.stringify(opts)], {
      execArgv: [],
      env: { ...process.env, NODE_OPTIONS: '', SPANFUSE_ENABLED: 'false' },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let result: LoadResult | undefined;
    child.once('message', (m) => {
      result = m as LoadResult;
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (result !== undefined) resolve(result);
      else reject(new Error(`demo load process ended without a result (${signal ?? `exit code ${code}`})`));
    });
  });
}
