/**
 * Load generator process (pinned by the harness to its own core): autocannon
 * at a fixed number of connections for a fixed time. Latency is recorded
 * from autocannon's per-response event at sub-millisecond resolution (its own
 * histogram rounds to whole milliseconds, too coarse for ratios near 1).
 */
import autocannon from 'autocannon';
import type { FromLoad, LoadResult, LoadRun, ToLoad } from './protocol.js';

function send(m: FromLoad): void {
  process.send?.(m);
}

const MAX_LATENCIES = 5_000_000;

export function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i] ?? Number.NaN;
}

async function runLoad(run: LoadRun): Promise<LoadResult> {
  const latencies = new Float64Array(MAX_LATENCIES);
  let n = 0;
  let non2xx = 0;
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: run.url,
        connections: run.connections,
        pipelining: 1,
        duration: run.durationSec,
        requests: run.paths.map((path) => ({ method: 'GET' as const, path })),
      },
      (err, res) => {
        if (err !== null && err !== undefined) reject(err instanceof Error ? err : new Error(JSON.stringify(err)));
        else resolve(res);
      },
    );
    instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTimeMs: number) => {
      if (statusCode < 200 || statusCode >= 300) non2xx++;
      else if (n < MAX_LATENCIES) latencies[n++] = responseTimeMs;
    });
  });
  const sorted = latencies.subarray(0, n).sort();
  return {
    requests: result.requests.total,
    durationSec: result.duration,
    non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    latencyMs: {
      p50: percentile(sorted, 0.5),
      p90: percentile(sorted, 0.9),
      p99: percentile(sorted, 0.99),
      max: n > 0 ? (sorted[n - 1] ?? Number.NaN) : Number.NaN,
    },
  };
}

process.on('message', (m: ToLoad) => {
  if (m.type === 'exit') {
    process.disconnect?.();
    return;
  }
  runLoad(m.run).then(
    (result) => send({ type: 'done', result }),
    (err: unknown) => send({ type: 'failed', error: String(err) }),
  );
});
send({ type: 'ready' });
