import type { LabelSet } from '@datadog/pprof';
import type { GenerateTimeLabelsArgs } from '@datadog/pprof/out/src/v8-types.js';
import {
  LABEL_LOCAL_ROOT_SPAN_ID,
  LABEL_SPAN_ID,
  LABEL_SPAN_NAME,
  LABEL_THREAD_ID,
  LABEL_THREAD_NAME,
  LABEL_TIMESTAMP_NS,
  LABEL_TRACE_FLAGS,
  LABEL_TRACE_ID,
} from '../core/labels.js';
import { resolveSample, sampleName } from '../context/index.js';
import type { SampleContext } from '../context/index.js';

export interface ThreadIdentity {
  readonly tid: number;
  readonly name: string;
}

/** Stack roots that mean "no JS of any span was running". */
const NOT_IN_SPAN = new Set(['(idle)', '(program)']);

/**
 * Builds the label function for one serialization. Label sets are built once
 * per SampleContext (ids are already hex; the name is the one recorded when
 * the span ended, so a span renamed after it started shows its final name)
 * and copied per sample only to add the timestamp.
 */
export function labelGenerator(thread: ThreadIdentity): (args: GenerateTimeLabelsArgs) => LabelSet {
  const threadLabels: LabelSet = {
    [LABEL_THREAD_ID]: String(thread.tid),
    [LABEL_THREAD_NAME]: thread.name,
  };
  const bySample = new Map<SampleContext, LabelSet>();

  const spanLabels = (s: SampleContext): LabelSet => {
    let set = bySample.get(s);
    if (set === undefined) {
      set = { ...threadLabels };
      set[LABEL_TRACE_ID] = s.traceId;
      set[LABEL_SPAN_ID] = s.spanId;
      set[LABEL_TRACE_FLAGS] = s.traceFlags.toString(16).padStart(2, '0');
      const name = sampleName(s);
      if (name !== undefined) set[LABEL_SPAN_NAME] = name;
      if (s.localRootSpanId !== undefined) set[LABEL_LOCAL_ROOT_SPAN_ID] = s.localRootSpanId;
      bySample.set(s, set);
    }
    return set;
  };

  // Runs inside @datadog/pprof's serializer: it must never throw, or the
  // window is lost and the native profiler is left half-stopped.
  return ({ node, context }) => {
    try {
      if (context === undefined) return threadLabels;
      // spanfuse binds SampleContexts; a Span or a Context (other callers) resolves too.
      const s = resolveSample(context.context);
      const inSpan = s.spanId !== '' && !NOT_IN_SPAN.has(node.name ?? '');
      const base = inSpan ? spanLabels(s) : threadLabels;
      // pprof-format takes bigint label values; the LabelSet type says number.
      const ts = (context.timestamp * 1000n) as unknown as number;
      return { ...base, [LABEL_TIMESTAMP_NS]: ts };
    } catch {
      return threadLabels;
    }
  };
}
