// Preload for heap-diff.ts (`dist/bench/memory/heap-diff.js`): writes two heap snapshots of this process,
// `<dir>/<tag>-A.heapsnapshot` at SNAP_A ms after start and
// `<dir>/<tag>-B.heapsnapshot` SNAP_GAP ms after the first one is written.
// Each snapshot runs a full GC first, so every object in B is live.
//
//   SNAP_TAG=sf SNAP_A=29700 SNAP_GAP=1500 SNAP_DIR=/tmp \
//     node --import ./dist/src/register.js --import ./dist/bench/memory/snapshots-at.js app.js
import { writeHeapSnapshot } from 'node:v8';

const dir = process.env.SNAP_DIR ?? '.';
const tag = process.env.SNAP_TAG ?? 'snap';
const first = Number(process.env.SNAP_A ?? 25_000);
const gap = Number(process.env.SNAP_GAP ?? 2_000);

setTimeout(() => {
  writeHeapSnapshot(`${dir}/${tag}-A.heapsnapshot`);
  setTimeout(() => writeHeapSnapshot(`${dir}/${tag}-B.heapsnapshot`), gap).unref();
}, first).unref();
