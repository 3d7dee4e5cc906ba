/**
 * A preload that logs the V8 heap spaces' used sizes every `WATCH_EVERY_MS`
 * (default 20 s) and writes heap snapshots at the process times listed in
 * `WATCH_SNAP_AT` (ms, comma-separated), for a long run whose heap moves:
 * which space grew, and when, and two snapshots around it for
 * `bench/gc/snapshot-diff.ts`. Files go to `WATCH_DIR` (default /tmp), named
 * by pid. With `WATCH_MAIN=substring` only a process whose main script
 * contains it watches (the overhead harness's server among its children):
 *
 *   WATCH_MAIN=server WATCH_SNAP_AT=420000,810000 node dist/bench/overhead/run.js --soak \
 *     --configs spanfuse-default --nodes node24 --soak-minutes 14 \
 *     --server-flag=--import=$PWD/dist/bench/gc/heap-watch.js
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8';

const env = process.env;
const only = env['WATCH_MAIN'] ?? '';
if ((process.argv[1] ?? '').includes(only)) {
  const dir = env['WATCH_DIR'] ?? '/tmp';
  const log = join(dir, `heap-watch-${process.pid}.log`);
  const t0 = Date.now();
  const line = (text: string): void => appendFileSync(log, `${((Date.now() - t0) / 1000).toFixed(0)} s ${text}\n`);
  setInterval(() => {
    const used: Record<string, number> = {};
    for (const s of getHeapSpaceStatistics()) {
      if (s.space_used_size > 0) used[s.space_name.replace(/_space$/, '')] = Math.round((s.space_used_size / 2 ** 20) * 10) / 10;
    }
    line(JSON.stringify(used));
  }, Number(env['WATCH_EVERY_MS'] ?? 20_000)).unref();
  for (const at of (env['WATCH_SNAP_AT'] ?? '').split(',').filter((s) => s !== '')) {
    setTimeout(() => line(`snapshot ${writeHeapSnapshot(join(dir, `heap-watch-${process.pid}-${at}.heapsnapshot`))}`), Number(at)).unref();
  }
}
