import { operationKey } from '../exemplars/index.js';
import { FlameError } from './model.js';
import type { Row } from './model.js';
import type { Loaded } from './load.js';
import type { SpanRecord } from './spans.js';

export interface Selection {
  readonly traceId?: string | undefined;
  readonly spanId?: string | undefined;
  /** An operation key (`GET /report (SERVER)`, as in `profiler.tail.operation`) or a span name. */
  readonly operation?: string | undefined;
  /** Only samples of tail spans (`profiler.tail.operation` label). */
  readonly tail?: boolean | undefined;
  /** Only samples of spans out of the tail. */
  readonly normal?: boolean | undefined;
}

export interface Selected {
  readonly rows: Row[];
  /** What was selected, in words (for titles). */
  readonly what: string;
  readonly samples: number;
  /** Distinct spans whose samples were selected. */
  readonly spansWithSamples: number;
  /** Windows that hold selected samples, and all windows read. */
  readonly windows: number;
  readonly windowsRead: number;
}

/** How an `--operation` was understood. */
export interface ResolvedOperation {
  /** The tail label value, when some span of it was in the tail. */
  readonly key: string | undefined;
  readonly spanNames: ReadonlySet<string>;
  /** Normal spans by id, when spans.jsonl tells them apart precisely (route, kind). */
  readonly normalIds: ReadonlySet<string> | undefined;
  readonly spans: readonly SpanRecord[];
}

export function resolveOperation(loaded: Loaded, name: string): ResolvedOperation {
  const { rows } = loaded.store;
  const names = new Set<string>();
  let key: string | undefined;
  for (const r of rows) if (r.tailOperation === name) names.add(r.spanName);
  if (names.size > 0) key = name;
  else {
    for (const r of rows) if (r.spanName === name) names.add(name);
    // A key of an operation none of whose spans reached the tail: spans.jsonl knows it.
    if (names.size === 0) for (const s of loaded.spans) if (spanOperation(s) === name) names.add(s.name);
    if (names.size === 0) {
      const known = knownOperations(loaded).slice(0, 8).map((o) => JSON.stringify(o)).join(', ');
      throw new FlameError('not-found', `no samples of operation ${JSON.stringify(name)}${known === '' ? '' : `; operations with samples: ${known}`}`);
    }
  }
  const opSpans = loaded.spans.filter((s) => names.has(s.name) && (key === undefined || spanOperation(s) === key));
  // spans.jsonl may keep only one trace in N of the spans out of the tail:
  // normal samples are then those of the spans it kept (the counts that
  // divide them come from the same spans), or, when it kept none of this
  // operation, every normal sample of it.
  const normal = opSpans.filter((s) => s.attributes['profiler.tail'] !== true);
  const normalIds = normal.length > 0 ? new Set(normal.map((s) => s.spanId)) : undefined;
  return { key, spanNames: names, normalIds, spans: opSpans };
}

export function spanOperation(s: SpanRecord): string {
  const route = s.attributes['http.route'];
  return operationKey(s.name, s.kind, typeof route === 'string' ? route : undefined);
}

/** Operation keys of tail labels first, then span names, by samples. */
export function knownOperations(loaded: Loaded): string[] {
  const count = new Map<string, number>();
  for (const r of loaded.store.rows) {
    const k = r.tailOperation !== '' ? r.tailOperation : r.spanName;
    if (k !== '') count.set(k, (count.get(k) ?? 0) + r.samples);
  }
  return [...count.entries()].sort((a, b) => b[1] - a[1]).map(([k]) => k);
}

/** Pick the rows of a selection; throws FlameError('not-found') when nothing matches. */
export function selectRows(loaded: Loaded, sel: Selection): Selected {
  const { rows, windows } = loaded.store;
  const preds: ((r: Row) => boolean)[] = [];
  const words: string[] = [];
  if (sel.tail === true && sel.normal === true) throw new FlameError('usage', '--tail and --normal exclude each other');
  if (sel.traceId !== undefined) {
    const id = sel.traceId.toLowerCase();
    if (!/^[0-9a-f]{32}$/.test(id)) throw new FlameError('usage', `--trace: expected 32 hex characters, got ${JSON.stringify(sel.traceId)}`);
    preds.push((r) => r.traceId === id);
    words.push(`trace ${id}`);
  }
  if (sel.spanId !== undefined) {
    const id = sel.spanId.toLowerCase();
    if (!/^[0-9a-f]{16}$/.test(id)) throw new FlameError('usage', `--span: expected 16 hex characters, got ${JSON.stringify(sel.spanId)}`);
    // A local root brings its whole local subtree (the child spans it waited on).
    const isRoot = rows.some((r) => r.localRootSpanId === id);
    preds.push(isRoot ? (r) => r.spanId === id || r.localRootSpanId === id : (r) => r.spanId === id);
    const name = rows.find((r) => r.spanId === id)?.spanName;
    words.push(`span ${id}${name === undefined || name === '' ? '' : ` (${name})`}${isRoot ? ' with its local subtree' : ''}`);
  }
  if (sel.operation !== undefined) {
    const op = resolveOperation(loaded, sel.operation);
    const inOp = (r: Row): boolean => op.spanNames.has(r.spanName);
    const isTail = (r: Row): boolean => (op.key !== undefined ? r.tailOperation === op.key : r.tailOperation !== '' && inOp(r));
    const isNormal = (r: Row): boolean => r.tailOperation === '' && inOp(r) && (op.normalIds === undefined || op.normalIds.has(r.spanId));
    if (sel.tail === true) preds.push(isTail);
    else if (sel.normal === true) preds.push(isNormal);
    else preds.push((r) => isTail(r) || isNormal(r));
    words.push(`${sel.tail === true ? 'tail spans of ' : sel.normal === true ? 'normal spans of ' : ''}operation ${op.key ?? sel.operation}`);
  } else if (sel.tail === true) {
    preds.push((r) => r.tailOperation !== '');
    words.push('tail spans');
  } else if (sel.normal === true) {
    preds.push((r) => r.spanId !== '' && r.tailOperation === '');
    words.push('spans out of the tail');
  }
  const picked = preds.length === 0 ? rows : rows.filter((r) => preds.every((p) => p(r)));
  const what = words.length === 0 ? 'all samples' : words.join(', ');
  if (picked.length === 0) {
    throw new FlameError('not-found', `no samples of ${what} in ${windows.length} window${windows.length === 1 ? '' : 's'}`);
  }
  return summarizeRows(picked, what, windows.length);
}

export function summarizeRows(rows: Row[], what: string, windowsRead: number): Selected {
  const spans = new Set<string>();
  const wins = new Set<number>();
  let samples = 0;
  for (const r of rows) {
    samples += r.samples;
    if (r.spanId !== '') spans.add(r.spanId);
    wins.add(r.window);
  }
  return { rows, what, samples, spansWithSamples: spans.size, windows: wins.size, windowsRead };
}
