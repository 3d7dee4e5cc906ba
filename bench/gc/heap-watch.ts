/**
 * A preload that logs the V8 heap spaces' used sizes every `WATCH_EVERY_MS`
 * (default 20 s) and writes heap snapshots at the process times listed in
 * `WATCH_SNAP_AT` (ms, comma-separated), for a long run whose heap moves:
 * which space grew, and when, and two snapshots around it for
 * `bench/gc/snapshot-diff.ts`. Files go to `WATCH_DIR` (default /tmp), named
 * by pid. With `WATCH_MAIN=substring` only a process whose main script
 * contains it watches (the overhead harness's server among its children).
 * With `WATCH_SMAPS=1` each line also has the RSS, the committed heap,
 * external memory, the thread count and where the RSS outside the heap is
 * (see `smapsParts`), for a soak whose RSS creeps while its heap is flat:
 *
 *   WATCH_MAIN=server WATCH_SNAP_AT=420000,810000 node dist/bench/overhead/run.js --soak \
 *     --configs spanfuse-default --nodes node24 --soak-minutes 14 \
 *     --server-flag=--import=$PWD/dist/bench/gc/heap-watch.js
 */
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getHeapSpaceStatistics, getHeapStatistics, writeHeapSnapshot } from 'node:v8';

/**
 * Where the RSS is outside the V8 heap, from `/proc/self/smaps` (kB): file
 * mappings, the brk heap, and anonymous mappings, with each anonymous
 * mapping holding over 1 MB listed by start address (a malloc arena keeps
 * its address for life; a growing one is what creeps). With
 * `WATCH_SMAPS=1` only.
 */
function smapsParts(): Record<string, unknown> {
  let file = 0;
  let brk = 0;
  let anon = 0;
  const big: [string, number, number][] = [];
  let start = '';
  let name = '';
  let size = 0;
  for (const l of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(l);
    if (head !== null) {
      start = head[1] ?? '';
      name = head[2] ?? '';
      continue;
    }
    if (l.startsWith('Size:')) size = Number(l.split(/\s+/)[1]);
    else if (l.startsWith('Rss:')) {
      const rss = Number(l.split(/\s+/)[1]);
      if (name.startsWith('/')) file += rss;
      else if (name === '[heap]') brk += rss;
      else {
        anon += rss;
        if (rss > 1024) big.push([start, size, rss]);
      }
    }
  }
  return { file, brk, anon, big };
}

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
    if (env['WATCH_SMAPS'] === '1') {
      const m = process.memoryUsage();
      const kb = (b: number): number => Math.round(b / 1024);
      Object.assign(used, {
        rssKb: kb(m.rss),
        committedKb: kb(getHeapStatistics().total_physical_size),
        externalKb: kb(m.external),
        arrayBuffersKb: kb(m.arrayBuffers),
        threads: readdirSync('/proc/self/task').length,
        ...smapsParts(),
      });
    }
    line(JSON.stringify(used));
  }, Number(env['WATCH_EVERY_MS'] ?? 20_000)).unref();
  for (const at of (env['WATCH_SNAP_AT'] ?? '').split(',').filter((s) => s !== '')) {
    setTimeout(() => line(`snapshot ${writeHeapSnapshot(join(dir, `heap-watch-${process.pid}-${at}.heapsnapshot`))}`), Number(at)).unref();
  }
}
