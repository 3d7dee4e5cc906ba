import { TimeProfiler } from '@datadog/pprof/out/src/time-profiler-bindings.js';
import type { TimeProfile, TimeProfileNode, TimeProfileNodeContext } from '@datadog/pprof/out/src/v8-types.js';
import { FRAME_GARBAGE_COLLECTION } from '../core/labels.js';
import { LazyStringTable } from '../core/pprof.js';
import { withSwapped } from '../core/swap.js';
import type { PackedChunk, ProfileChunk } from './assemble.js';

/** Stack roots that mean "no JS of any span was running". */
const NOT_IN_SPAN = new Set(['(idle)', '(program)']);

/** The names @datadog/pprof's serializer gives its synthetic frames. */
const RUNTIME_FRAME = 'Node.js';
const NON_JS_THREADS_FRAME = 'Non JS threads activity';

/**
 * What @datadog/pprof's own serializer is handed while {@link stopCapturing}
 * keeps the real profile: no samples, so it builds an empty pprof profile in
 * microseconds instead of the chunk's whole one.
 */
const EMPTY_PROFILE: TimeProfile = Object.freeze({
  startTime: 0,
  endTime: 0,
  totalHitCount: 0,
  hasCpuTime: false,
  topDownRoot: Object.freeze({ name: '(root)', scriptName: '', scriptId: 0, lineNumber: 0, columnNumber: 0, hitCount: 0, children: [] }),
});

type NativeStop = (this: unknown, ...args: unknown[]) => unknown;

/**
 * Run `stop` (one `time.stop` of @datadog/pprof) and return the native time
 * profile it stopped, before its serializer turns it into pprof-format
 * objects: the serializer is given an empty profile instead. spanfuse packs
 * the native tree itself ({@link packTimeProfile}), straight into the flat
 * arrays a window is later built from.
 *
 * Why: a stop holds the event loop, and in a service with real stacks the
 * serializer was most of it. In the overhead bench's HTTP service (Node 24,
 * ~240 samples and ~500 tree nodes per stop) the native part took 1.2-2.9 ms
 * and the whole stop 3.7-10 ms: the serializer's code runs four times a
 * window, so V8 mostly interprets it, and it built a Sample, a Location, a
 * Line, a Function and label objects per entry, which spanfuse then packed
 * into typed arrays on later turns.
 *
 * The method is replaced on the native class's prototype for the length of
 * this one synchronous call only (nothing else runs meanwhile; other users
 * of @datadog/pprof see it unchanged), as `certainStuckOnly` (wall.ts) does
 * for the stuck-profiler check. Everything else `time.stop` does (the
 * restart, the stuck-profiler check and its restart from scratch, which
 * stops the native profiler a second time) runs as before.
 */
export function stopCapturing(stop: () => unknown, proto: object = profilerPrototype()): TimeProfile {
  let raw: TimeProfile | undefined;
  const capture = (original: NativeStop): NativeStop =>
    function (this: unknown, ...args: unknown[]): unknown {
      // Only the first: on a stuck profiler `time.stop` stops and starts
      // the native profiler once more (its own restart from scratch), and
      // drops what that second stop returns.
      if (raw !== undefined) return original.apply(this, args);
      raw = original.apply(this, args) as TimeProfile;
      return EMPTY_PROFILE;
    };
  withSwapped(proto, 'stop', capture, stop);
  if (raw === undefined) throw new Error('the wall profiler stopped without a native profile');
  return raw;
}

/** The prototype of @datadog/pprof's native wall profiler class (its methods are swapped there for one call). */
export function profilerPrototype(): object {
  return (TimeProfiler as { prototype?: object } | undefined)?.prototype ?? {};
}

/** A tree node, or one of the serializer's synthetic ones (same fields). */
type Node = TimeProfileNode;

/**
 * The root's children as @datadog/pprof's serializer arranges them: no
 * `(program)`; no `(idle)` without contexts; `(garbage collector)` renamed
 * `Garbage Collection` under a `Node.js` frame, where the CPU time of the
 * process's non-JS threads goes too (main thread with CPU time only, one
 * zero-wall entry).
 */
function topLevel(prof: TimeProfile): Node[] {
  const out: Node[] = [];
  let runtime: Node | undefined;
  const runtimeNode = (): Node => {
    if (runtime === undefined) {
      runtime = { name: RUNTIME_FRAME, scriptName: '', scriptId: 0, lineNumber: 0, columnNumber: 0, children: [], hitCount: 0 };
      out.push(runtime);
    }
    return runtime;
  };
  const children = prof.topDownRoot.children as Node[];
  for (let i = 0; i < children.length; i++) {
    const child = children[i] as Node;
    if (child.name === '(program)') continue;
    if (child.name === '(idle)' && child.contexts?.length === 0) continue;
    if (child.name === '(garbage collector)') runtimeNode().children.push({ ...child, name: FRAME_GARBAGE_COLLECTION });
    else out.push(child);
  }
  if (prof.hasCpuTime === true && prof.nonJSThreadsCpuTime) {
    const context: TimeProfileNodeContext = { context: {}, timestamp: 0n, cpuTime: prof.nonJSThreadsCpuTime, asyncId: -1 };
    const nonJs: Node = {
      name: NON_JS_THREADS_FRAME,
      scriptName: '',
      scriptId: 0,
      lineNumber: 0,
      columnNumber: 0,
      children: [],
      hitCount: 0,
      contexts: [context],
    };
    runtimeNode().children.push(nonJs);
  }
  return out;
}

function totalHits(root: Node): number {
  let n = 0;
  const todo: Node[] = [root];
  while (todo.length > 0) {
    const node = todo.pop() as Node;
    n += node.hitCount;
    const children = node.children as Node[];
    for (let i = 0; i < children.length; i++) todo.push(children[i] as Node);
  }
  return n;
}

/**
 * One native stop as a chunk: the profile @datadog/pprof's serializer would
 * make of it (same frames, names, values and samples; see topLevel and the
 * loop below), written straight into a {@link PackedChunk}, with one entry
 * per sampled context in `contexts`, `timestampsUs` and `notInSpan` (the
 * values the sampler held and when; the index is the sample's
 * `contextIndex`). `intervalMicros` is the sampling interval asked for; the
 * wall value of a hit is the average interval the stop actually had, kept
 * between one and two intervals, as the serializer computes it.
 *
 * Indexed loops and no per-node arrays: this runs inside the stop, four
 * times a window, mostly interpreted.
 */
export function packTimeProfile(prof: TimeProfile, intervalMicros: number): ProfileChunk {
  const hits = prof.totalHitCount ?? totalHits(prof.topDownRoot);
  let interval = intervalMicros;
  if (hits > 0) interval = Math.min(Math.max(Math.floor((prof.endTime - prof.startTime) / hits), intervalMicros), 2 * intervalMicros);
  const intervalNanos = interval * 1000;
  const withCpu = prof.hasCpuTime === true;
  const valuesPerSample = withCpu ? 3 : 2;

  const table = new LazyStringTable();
  const functions: number[] = [];
  const functionIds = new Map<string, number>();
  const locations: number[] = [];
  const locationIds = new Map<string, number>();
  const locationOf = (node: Node): number => {
    const line = node.lineNumber;
    const column = node.columnNumber;
    const name = node.name;
    const scriptId = node.scriptId;
    const key = `${String(scriptId)}:${String(line)}:${String(column)}:${String(name)}`;
    let id = locationIds.get(key);
    if (id !== undefined) return id;
    const fnKey = name ? `${String(scriptId)}:${name}` : `${String(scriptId)}:${String(line)}:${String(column)}`;
    let fn = functionIds.get(fnKey);
    if (fn === undefined) {
      fn = functions.length / 3 + 1;
      functionIds.set(fnKey, fn);
      const scriptName = node.scriptName.startsWith('file://') ? node.scriptName.slice(7) : node.scriptName;
      functions.push(fn, table.dedup(name || anonymousName(line, column)), table.dedup(scriptName));
    }
    id = locations.length / 3 + 1;
    locationIds.set(key, id);
    locations.push(id, fn, line ?? 0);
    return id;
  };

  const contexts: unknown[] = [];
  const timestampsUs: number[] = [];
  const notInSpan: boolean[] = [];
  const stackStart: number[] = [];
  const stacks: number[] = [];
  const values: number[] = [];
  const contextIndex: number[] = [];
  // The locations from the root to the node being visited.
  const path: number[] = [];
  const addSample = (depth: number, hitsIn: number, wallNs: number, cpuNs: number, ctx: number): void => {
    stackStart.push(stacks.length);
    for (let d = depth; d >= 0; d--) stacks.push(path[d] as number);
    values.push(hitsIn, wallNs);
    if (withCpu) values.push(cpuNs);
    contextIndex.push(ctx);
  };

  // Depth-first with an explicit stack, last child first, as the serializer
  // walks (the same ids and sample order).
  const todo = topLevel(prof);
  const depths: number[] = new Array<number>(todo.length).fill(0);
  while (todo.length > 0) {
    const node = todo.pop() as Node;
    const depth = depths.pop() as number;
    path[depth] = locationOf(node);
    const isIdle = node.name === '(idle)';
    const outside = NOT_IN_SPAN.has(node.name ?? '');
    let unlabelled = node.hitCount;
    const ctxs = node.contexts;
    if (ctxs !== undefined) {
      for (let i = 0; i < ctxs.length; i++) {
        const c = ctxs[i] as TimeProfileNodeContext;
        const index = contexts.length;
        contexts.push(c.context);
        timestampsUs.push(Number(c.timestamp));
        notInSpan.push(outside);
        if (unlabelled > 0) addSample(depth, 1, isIdle ? 0 : intervalNanos, c.cpuTime ?? 0, index);
        else addSample(depth, 0, 0, c.cpuTime ?? 0, index);
        unlabelled--;
      }
    }
    if (!isIdle && unlabelled > 0) addSample(depth, unlabelled, unlabelled * intervalNanos, 0, -1);
    const children = node.children as Node[];
    for (let i = 0; i < children.length; i++) {
      todo.push(children[i] as Node);
      depths.push(depth + 1);
    }
  }
  stackStart.push(stacks.length);

  const packed: PackedChunk = {
    strings: table.strings,
    functions: Int32Array.from(functions),
    locations: Int32Array.from(locations),
    stackStart: Int32Array.from(stackStart),
    stacks: Int32Array.from(stacks),
    values: Float64Array.from(values),
    valuesPerSample,
    contextIndex: Int32Array.from(contextIndex),
    intervalNanos,
  };
  return { packed, samples: contextIndex.length, contexts, timestampsUs, notInSpan };
}

/** The serializer's name for a function without one. */
function anonymousName(line: number | undefined, column: number | undefined): string {
  if (!line) return '(anonymous)';
  return column ? `(anonymous:L#${String(line)}:C#${String(column)})` : `(anonymous:L#${String(line)})`;
}
