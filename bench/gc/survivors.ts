/**
 * A preload that names, by allocation stack, what survives each
 * young-generation collection of the process it is loaded into.
 *
 * V8's sampling heap profiler (through the inspector, every `SURV_INTERVAL`
 * bytes allocated on average) keeps the samples whose objects are still
 * alive, each with an ordinal that grows with allocation time. After each
 * scavenge (a `gc` performance entry of the minor kind) the samples with an
 * ordinal above the previous scavenge's are the objects allocated since then
 * that outlived it: what that scavenge copied (the second survival of an
 * object, its promotion, is counted at the scavenge before). Prints, to
 * stderr, each scavenge's total after `SURV_FROM_MS`, and the top
 * `SURV_TOP` stacks (`SURV_DEPTH` frames) of those above `SURV_BIG_KB`.
 *
 *   EL_TRACING=spanfuse node --import ./dist/src/register.js \
 *     --import ./dist/bench/gc/survivors.js dist/bench/eventloop/app.js
 *
 * Sampling: an object is seen with a probability that grows with its size,
 * and the profiler itself costs CPU. These are first survivals only:
 * `--trace-gc-nvp`'s `new_space_survived` also counts an object's second
 * survival (its promotion), and on the event-loop app (Node 24, 2026-12-04)
 * read about twice these totals (~450 against ~235 KB/s). The inspector
 * session's own messages show up as small entries under `node:inspector`.
 *
 * `SURV_SUM_TO_MS=5000` instead sums the survivors of every scavenge from
 * `SURV_FROM_MS` (0 with it) to that time by stack, and prints the top
 * `SURV_TOP` once: what a process keeps while V8 sizes its young generation.
 */
import { Session } from 'node:inspector/promises';
import { PerformanceObserver, constants } from 'node:perf_hooks';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children: ProfileNode[];
}
interface SamplingProfile {
  readonly head: ProfileNode;
  readonly samples: { readonly size: number; readonly nodeId: number; readonly ordinal: number }[];
}

const env = process.env;
const num = (k: string, d: number): number => Number(env[k] ?? d);
const sumToMs = num('SURV_SUM_TO_MS', 0);
const fromMs = num('SURV_FROM_MS', sumToMs > 0 ? 0 : 5000);
const summed = new Map<string, number>();
let summedTotal = 0;
let summedScavenges = 0;
const bigKb = num('SURV_BIG_KB', 250);
const top = num('SURV_TOP', 10);
const depth = num('SURV_DEPTH', 5);
const maxListed = num('SURV_LISTED', 6);

const session = new Session();
session.connect();
await session.post('HeapProfiler.enable');
await session.post('HeapProfiler.startSampling', { samplingInterval: num('SURV_INTERVAL', 512) });

const t0 = Date.now();
let lastOrdinal = 0;
let busy = false;
let listed = 0;

function frameName(f: CallFrame): string {
  return `${f.functionName || '(anon)'}@${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
}

async function afterScavenge(): Promise<void> {
  const { profile } = (await session.post('HeapProfiler.getSamplingProfile')) as unknown as { profile: SamplingProfile };
  const parent = new Map<number, ProfileNode | undefined>();
  const nodes = new Map<number, ProfileNode>();
  const stack: [ProfileNode, ProfileNode | undefined][] = [[profile.head, undefined]];
  for (let e = stack.pop(); e !== undefined; e = stack.pop()) {
    const [n, p] = e;
    nodes.set(n.id, n);
    parent.set(n.id, p);
    for (const c of n.children) stack.push([c, n]);
  }
  const byStack = new Map<string, number>();
  let total = 0;
  let max = lastOrdinal;
  for (const s of profile.samples) {
    if (s.ordinal > max) max = s.ordinal;
    if (s.ordinal <= lastOrdinal) continue;
    const parts: string[] = [];
    let n = nodes.get(s.nodeId);
    for (let i = 0; i < depth && n !== undefined && n.callFrame.functionName !== '(root)'; i++) {
      parts.push(frameName(n.callFrame));
      n = parent.get(n.id);
    }
    const key = parts.join(' < ');
    byStack.set(key, (byStack.get(key) ?? 0) + s.size);
    total += s.size;
  }
  lastOrdinal = max;
  const at = Date.now() - t0;
  if (at < fromMs) return;
  if (sumToMs > 0) {
    if (at > sumToMs) return;
    summedScavenges++;
    summedTotal += total;
    for (const [k, v] of byStack) summed.set(k, (summed.get(k) ?? 0) + v);
    return;
  }
  process.stderr.write(`survivors: scavenge at ${at} ms kept ${(total / 1024).toFixed(0)} KB allocated since the one before\n`);
  if (total < bigKb * 1024 || listed++ >= maxListed) return;
  for (const [k, v] of [...byStack].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    process.stderr.write(`survivors:   ${(v / 1024).toFixed(1).padStart(7)} KB  ${k}\n`);
  }
}

const observer = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind;
    if (kind !== constants.NODE_PERFORMANCE_GC_MINOR || busy) continue;
    busy = true;
    afterScavenge()
      .catch((err: unknown) => process.stderr.write(`survivors: ${String(err)}\n`))
      .finally(() => (busy = false));
  }
});
observer.observe({ entryTypes: ['gc'] });

if (sumToMs > 0) {
  setTimeout(() => {
    process.stderr.write(`survivors: ${summedScavenges} scavenges from ${fromMs} to ${sumToMs} ms kept ${(summedTotal / 1024).toFixed(0)} KB in all\n`);
    for (const [k, v] of [...summed].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      process.stderr.write(`survivors:   ${(v / 1024).toFixed(1).padStart(7)} KB  ${k}\n`);
    }
  }, sumToMs + 200).unref();
}
