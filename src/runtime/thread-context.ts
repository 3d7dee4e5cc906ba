import { createRequire } from 'node:module';
import type { SpanContext } from '@opentelemetry/api';
import { asyncContextFrameHint } from '@datadog/pprof/out/src/async-context-frame.js';
import { detectContextMode } from '../context/mode.js';
import { describe } from '../core/diagnostics.js';
import { hexInto } from '../core/hex.js';

/**
 * OTEP-4947 thread context through @datadog/pprof's `otel-thread-ctx` writer:
 * while a span is active, the thread's record holds its trace id, span id,
 * flags and the attributes of `THREAD_CONTEXT_KEYS`, so an eBPF profiler
 * reading the thread's TLS sees the span. Needs AsyncContextFrame (Node 24,
 * or 22 with the flag) and Linux; elsewhere `supported` is false with the
 * reason, and `run()` just calls `fn`.
 */
export const THREAD_CONTEXT_KEYS = ['span_name', 'local_root_span_id'] as const;

interface ThreadContext {
  invalidate(): void;
  debugBytes(): Uint8Array;
  run<T>(fn: () => T): T;
}

interface OtelThreadCtx {
  ThreadContext: new (traceId: Uint8Array, spanId: Uint8Array, traceFlags?: number, attributes?: Array<string | null | undefined>) => ThreadContext;
  getProcessContextAttributes(keys: string[]): Record<string, string | readonly string[]>;
}

export type ThreadContextSupport =
  | { readonly supported: true; readonly api: OtelThreadCtx }
  | { readonly supported: false; readonly reason: string };

/** Feature detection only: AsyncContextFrame active and the writer loadable. */
export function detectThreadContext(): ThreadContextSupport {
  if (process.platform !== 'linux') return { supported: false, reason: `thread context records are Linux-only (${process.platform})` };
  try {
    // The sampler's own detection (context/mode.ts): one answer for both.
    if (detectContextMode() !== 'async-context-frame') {
      return { supported: false, reason: `AsyncContextFrame is not active: ${asyncContextFrameHint()}` };
    }
    // The writer's own module, not the package index (see core/dd-pprof.ts).
    const api = createRequire(import.meta.url)('@datadog/pprof/out/src/otel-thread-ctx.js') as OtelThreadCtx;
    // Throws when the writer cannot publish on this runtime.
    api.getProcessContextAttributes([...THREAD_CONTEXT_KEYS]);
    return { supported: true, api };
  } catch (err) {
    return { supported: false, reason: describe(err) };
  }
}

/**
 * Scratch buffers for the ids: the writer copies the bytes into its record
 * (`CopyBytes` memcpy in @datadog/pprof's otel-thread-ctx), so one buffer
 * per size is reused instead of a Buffer allocated per id.
 */
const SCRATCH: Record<number, Uint8Array> = { 8: new Uint8Array(8), 16: new Uint8Array(16) };

function hexBytes(hex: string, n: number): Uint8Array {
  // The usual case (a valid id of the right length): parsed into the scratch buffer.
  const out = SCRATCH[n];
  if (out !== undefined && hex.length === n * 2 && hexInto(out, hex, 0)) return out;
  return Uint8Array.from(Buffer.from(hex.padStart(n * 2, '0').slice(-n * 2), 'hex'));
}

/**
 * One record per span: kept on the object that stands for the span (spanfuse
 * passes its per-span SampleContext, which has the SpanContext fields), so
 * no map is touched per span; it dies with that object.
 */
const RECORD = Symbol('spanfuse.threadContextRecord');
type WithRecord = { [RECORD]?: ThreadContext | undefined };

export class ThreadContextPublisher {
  readonly #api: OtelThreadCtx | undefined;
  readonly reason: string | undefined;

  constructor(support: ThreadContextSupport = detectThreadContext()) {
    if (support.supported) this.#api = support.api;
    else this.reason = support.reason;
  }

  get supported(): boolean {
    return this.#api !== undefined;
  }

  /** The key map to publish in the OTEP-4719 process context attributes. */
  processContextAttributes(): Record<string, string | readonly string[]> | undefined {
    return this.#api?.getProcessContextAttributes([...THREAD_CONTEXT_KEYS]);
  }

  /** The cached record of a span (created on first use); undefined if unsupported. */
  contextFor(spanContext: SpanContext, spanName?: string, localRootSpanId?: string): ThreadContext | undefined {
    const api = this.#api;
    if (!api) return undefined;
    const holder = spanContext as WithRecord;
    let ctx = holder[RECORD];
    if (ctx === undefined) {
      ctx = new api.ThreadContext(hexBytes(spanContext.traceId, 16), hexBytes(spanContext.spanId, 8), spanContext.traceFlags, [
        spanName,
        localRootSpanId,
      ]);
      holder[RECORD] = ctx;
    }
    return ctx;
  }

  /**
   * Run `fn` with the span's record active on this thread (and every
   * continuation of it). Call it inside the context manager's `with()`.
   */
  run<T>(spanContext: SpanContext, fn: () => T, spanName?: string, localRootSpanId?: string): T {
    const ctx = this.contextFor(spanContext, spanName, localRootSpanId);
    return ctx ? ctx.run(fn) : fn();
  }

  /** On span end: every frame still holding the record now shows it invalid. */
  end(spanContext: SpanContext): void {
    const holder = spanContext as WithRecord;
    const ctx = holder[RECORD];
    if (!ctx) return;
    ctx.invalidate();
    holder[RECORD] = undefined;
  }
}
