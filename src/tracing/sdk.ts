/**
 * The OpenTelemetry SDK packages, loaded when first needed instead of with
 * spanfuse (the main thread still loads them at start: see install.ts).
 * Every worker thread loads the preload, and most never start a span or
 * carry one: importing @opentelemetry/sdk-trace-base (with core,
 * resources and semantic-conventions, ~100 modules) took 60-90 ms of each
 * worker's start and some MB of its heap. These packages resolve to their
 * CommonJS builds from spanfuse's ES modules too ("main", no "exports"), so
 * require() here returns the same module instances an import would.
 */
import { createRequire } from 'node:module';
import { createContextKey } from '@opentelemetry/api';
import type { Context, TextMapPropagator, Tracer, TracerOptions, TracerProvider } from '@opentelemetry/api';
import type { BasicTracerProvider, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan, Span } from '@opentelemetry/sdk-trace-base';

import { NOOP_PROVIDER } from './handover.js';

const require = createRequire(import.meta.url);

type SdkTraceBase = typeof import('@opentelemetry/sdk-trace-base');
type Resources = typeof import('@opentelemetry/resources');
type Core = typeof import('@opentelemetry/core');

/**
 * The key @opentelemetry/core's suppressTracing() sets: createContextKey is
 * Symbol.for(description), so this is the same key, without loading core.
 */
const SUPPRESS_TRACING = createContextKey('OpenTelemetry SDK Context Key SUPPRESS_TRACING');

/** `ctx` with tracing suppressed (exporters' own requests make no spans). */
export function suppressTracing(ctx: Context): Context {
  return ctx.setValue(SUPPRESS_TRACING, true);
}

/** Whether tracing is suppressed in `ctx`. */
export function isTracingSuppressed(ctx: Context): boolean {
  return ctx.getValue(SUPPRESS_TRACING) === true;
}

let w3c: TextMapPropagator | undefined;

/** The W3C trace-context propagator (@opentelemetry/core's), loaded on first use. */
export function w3cPropagator(): TextMapPropagator {
  w3c ??= new (require('@opentelemetry/core') as Core).W3CTraceContextPropagator();
  return w3c;
}

/** A span processor that does nothing. */
export const noopSpanProcessor: SpanProcessor = {
  onStart(_span: Span, _parent: Context): void {},
  onEnd(_span: ReadableSpan): void {},
  forceFlush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
};

/** What {@link DeferredTracerProvider} needs of the SDK packages. */
export interface SdkParts {
  readonly BasicTracerProvider: SdkTraceBase['BasicTracerProvider'];
  readonly resourceFromAttributes: Resources['resourceFromAttributes'];
}

/** The SDK's parts, required from spanfuse's own dependencies. */
export function requireSdk(): SdkParts {
  const { BasicTracerProvider } = require('@opentelemetry/sdk-trace-base') as SdkTraceBase;
  const { resourceFromAttributes } = require('@opentelemetry/resources') as Resources;
  return { BasicTracerProvider, resourceFromAttributes };
}

/**
 * A tracer provider whose SDK provider (a BasicTracerProvider with
 * `resourceAttributes` and `spanProcessors`) is created by {@link load} or
 * at its first getTracer(): until then nothing of the SDK is loaded.
 */
export class DeferredTracerProvider implements TracerProvider {
  readonly #resourceAttributes: Record<string, string | number | boolean>;
  readonly #spanProcessors: SpanProcessor[];
  readonly #sdk: () => SdkParts;
  #provider: BasicTracerProvider | undefined;
  #unavailable: TracerProvider | undefined;
  #shutdown = false;

  /** `sdk` loads the SDK's parts (tests give their own). */
  constructor(resourceAttributes: Record<string, string | number | boolean>, spanProcessors: SpanProcessor[], sdk: () => SdkParts = requireSdk) {
    this.#resourceAttributes = resourceAttributes;
    this.#spanProcessors = spanProcessors;
    this.#sdk = sdk;
  }

  /**
   * A tracer of the SDK provider. When the SDK cannot be loaded (a worker's
   * first getTracer() runs in the app's own code), a no-op tracer, with one
   * warning, instead of an exception there: this thread then makes no spans.
   */
  getTracer(name: string, version?: string, options?: TracerOptions): Tracer {
    if (this.#unavailable === undefined) {
      try {
        return this.load().getTracer(name, version, options);
      } catch (err) {
        this.#unavailable = NOOP_PROVIDER;
        process.emitWarning(`spanfuse: the OpenTelemetry SDK could not be loaded (${err instanceof Error ? err.message : String(err)}); this thread makes no spans`, {
          code: 'SPANFUSE_SDK_UNAVAILABLE',
        });
      }
    }
    return this.#unavailable.getTracer(name, version, options);
  }

  /** The SDK provider, created (and the SDK loaded) now if it was not yet. Throws when the SDK cannot be loaded. */
  load(): BasicTracerProvider {
    if (this.#provider === undefined) {
      const { BasicTracerProvider: Provider, resourceFromAttributes } = this.#sdk();
      this.#provider = new Provider({ resource: resourceFromAttributes(this.#resourceAttributes), spanProcessors: this.#spanProcessors });
      // Shut down before its first tracer: its tracers make no spans.
      if (this.#shutdown) this.#provider.shutdown().catch(() => undefined);
    }
    return this.#provider;
  }

  /** Shut the SDK provider down (flushing its processors), if it was created. */
  async shutdown(): Promise<void> {
    this.#shutdown = true;
    await this.#provider?.shutdown();
  }
}
