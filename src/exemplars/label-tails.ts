import { LABEL_SPAN_ID } from '../core/labels.js';
import { findLabel, Label } from '../core/pprof.js';
import type { Profile } from '../core/pprof.js';
import type { TailSpanRef, WindowProfile } from '../core/window.js';
import { runSync, STEP_ENTRIES, stepEvery } from '../core/slices.js';
import type { Steps } from '../core/slices.js';

/** Sample label naming the operation whose tail the sample's span was in. */
export const LABEL_TAIL_OPERATION = 'profiler.tail.operation';
/** Sample label with the tail rule that marked it (`p99`, `budget` ...). */
export const LABEL_TAIL_QUANTILE = 'profiler.tail.quantile';

/**
 * Write the window's tail spans into its profiles: every sample of a tail
 * span gets `profiler.tail.operation` and `profiler.tail.quantile` labels, so
 * a viewer (or `go tool pprof -tagfocus`) can take the samples of the tail of
 * an operation apart from those of its normal spans (same `span_name`, no
 * tail label). Returns the number of samples labelled.
 */
export function labelTailSamples(window: WindowProfile): number {
  return runSync(labelTailSteps(window));
}

/** {@link labelTailSamples} in steps: yields every few hundred samples. */
export function* labelTailSteps(window: WindowProfile): Steps<number> {
  if (window.tailSpans.length === 0) return 0;
  const bySpan = new Map<string, TailSpanRef>();
  for (const ref of window.tailSpans) bySpan.set(ref.spanId, ref);
  let n = 0;
  for (const p of [window.wall, window.heap, window.offCpu]) {
    if (p !== undefined) n += yield* labelProfile(p, bySpan);
  }
  return n;
}

function* labelProfile(p: Profile, bySpan: ReadonlyMap<string, TailSpanRef>): Steps<number> {
  const strings = p.stringTable.strings;
  const spanKey = strings.indexOf(LABEL_SPAN_ID);
  if (spanKey <= 0) return 0;
  const opKey = p.stringTable.dedup(LABEL_TAIL_OPERATION);
  const qKey = p.stringTable.dedup(LABEL_TAIL_QUANTILE);
  // One pair of Label objects per tail span, shared by its samples.
  const labels = new Map<string, [Label, Label]>();
  let n = 0;
  const due = stepEvery(STEP_ENTRIES);
  const samples = p.sample;
  for (let i = 0; i < samples.length; i++) {
    if (due()) yield;
    const s = samples[i] as (typeof samples)[number];
    const spanLabel = findLabel(s.label, spanKey);
    if (spanLabel === undefined) continue;
    const spanId = strings[Number(spanLabel.str)] ?? '';
    const ref = bySpan.get(spanId);
    if (ref === undefined) continue;
    let pair = labels.get(spanId);
    if (pair === undefined) {
      pair = [
        new Label({ key: opKey, str: p.stringTable.dedup(ref.operation) }),
        new Label({ key: qKey, str: p.stringTable.dedup(ref.quantile) }),
      ];
      labels.set(spanId, pair);
    }
    s.label = [...s.label, ...pair];
    n++;
  }
  return n;
}
