/**
 * One server span per request, made the way each configuration's user would.
 * Loaded after the profiler started (see server.ts).
 */
import type { ServerSpec } from './protocol.js';
import { benchRequire } from './profilers.js';
import { registerOtelControl } from './otel-control.js';

/** Calls `body` inside the request's span; `end()` ends the span if we own it. */
export type InSpan = (name: string, body: (spanIdHex: string, end: () => void) => void) => void;

export interface Tracing {
  readonly inSpan: InSpan;
  /** False once any request ran without a recording span. */
  recording(): boolean;
}

const ZERO_SPAN = '0000000000000000';

export async function setupTracing(spec: ServerSpec): Promise<Tracing> {
  if (spec.tracing === 'dd-trace') return ddTracing(spec);
  if (spec.tracing === 'none') return { recording: () => true, inSpan: (_name, body) => body(ZERO_SPAN, () => {}) };
  const api = await import('@opentelemetry/api');
  if (spec.tracing === 'otel-basic') {
    await registerOtelControl();
  }
  // 'spanfuse': the app registers nothing; spanfuse installs its provider.
  const tracer = api.trace.getTracer('spanfuse-bench');
  let recording = true;
  const opts = { kind: api.SpanKind.SERVER };
  return {
    recording: () => recording,
    inSpan: (name, body) => {
      tracer.startActiveSpan(name, opts, (span) => {
        const id = span.spanContext().spanId;
        if (!span.isRecording() || id === ZERO_SPAN) recording = false;
        body(id, () => span.end());
      });
    },
  };
}

function ddTracing(spec: ServerSpec): Tracing {
  const tracer = benchRequire(spec)('dd-trace');
  let recording = true;
  return {
    recording: () => recording,
    inSpan: (_name, body) => {
      // dd-trace's http plugin opened the span before our handler ran and
      // ends it when the response finishes.
      const span = tracer.scope().active();
      if (span === null || span === undefined) {
        recording = false;
        body(ZERO_SPAN, () => {});
        return;
      }
      const dec: string = span.context().toSpanId();
      body(BigInt(dec).toString(16).padStart(16, '0'), () => {});
    },
  };
}
