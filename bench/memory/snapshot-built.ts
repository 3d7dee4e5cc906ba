// Preload for heap-diff.ts, after spanfuse's register: heap snapshot A at
// SNAP_A ms after start, then snapshot B the moment the next window is built
// (polling `stats().windows.collected` every millisecond). Objects new in B
// are then what the window close holds while the window waits for its
// scrub, encode and write: what a scavenge in that span copies.
//
//   SNAP_A=29500 SNAP_TAG=built SNAP_DIR=/tmp EL_TRACING=spanfuse EL_DURATION_MS=34000 \
//     node --import ./dist/src/register.js --import ./dist/bench/memory/snapshot-built.js \
//     dist/bench/eventloop/app.js
//   node dist/bench/memory/heap-diff.js /tmp/built-A.heapsnapshot /tmp/built-B.heapsnapshot
import { writeHeapSnapshot } from 'node:v8';
import { current } from '../../src/index.js';

const dir = process.env.SNAP_DIR ?? '.';
const tag = process.env.SNAP_TAG ?? 'built';
const first = Number(process.env.SNAP_A ?? 29_500);

setTimeout(() => {
  const sf = current();
  if (sf === undefined) {
    process.stderr.write('snapshot-built: spanfuse is not running (preload dist/src/register.js first)\n');
    return;
  }
  writeHeapSnapshot(`${dir}/${tag}-A.heapsnapshot`);
  const before = sf.stats().windows.collected;
  const poll = setInterval(() => {
    if (sf.stats().windows.collected === before) return;
    clearInterval(poll);
    writeHeapSnapshot(`${dir}/${tag}-B.heapsnapshot`);
  }, 1);
  poll.unref();
}, first).unref();
