import { ProxyTracerProvider } from '@opentelemetry/api';
import type { Context, Span, SpanOptions, Tracer, TracerOptions, TracerProvider } from '@opentelemetry/api';

/** What a handover tracer asks to know which provider serves spans now. */
export interface DelegateSource {
  getDelegate(): TracerProvider;
}

/** The API's own no-op provider (its tracers make non-recording spans). */
export const NOOP_PROVIDER: TracerProvider = new ProxyTracerProvider().getDelegate();

/**
 * The delegate spanfuse gives the API's proxy provider when the app has none.
 *
 * The API hands the proxy's delegate tracers out directly, and
 * instrumentations keep the tracer they got (NodeSDK registers them before it
 * registers its provider). A plain provider here would keep serving those
 * instrumentations after the app's provider takes over, and the app's
 * exporter would never see their spans. So every tracer handed out here
 * checks, on each span start, whether this provider is still the proxy's
 * delegate (one identity comparison) and otherwise forwards the call to the
 * provider that replaced it, asking that provider for its tracer once per
 * change.
 */
export class HandoverTracerProvider implements TracerProvider {
  readonly #own: TracerProvider;
  readonly #proxy: DelegateSource;
  readonly #tracers = new Map<string, HandoverTracer>();
  readonly #onHandover: (() => void) | undefined;
  /** The provider installed as the proxy's delegate (this one, or the one this was derived from). */
  readonly #installed: HandoverTracerProvider;
  readonly #quiet: boolean;
  #handedOver = false;

  constructor(own: TracerProvider, proxy: DelegateSource, onHandover?: () => void, installed?: HandoverTracerProvider) {
    this.#own = own;
    this.#proxy = proxy;
    this.#onHandover = onHandover;
    this.#installed = installed ?? this;
    this.#quiet = installed !== undefined;
  }

  /**
   * Tracers over the same provider that produce no spans once another
   * provider serves (no-op tracers) instead of forwarding: for spanfuse's own
   * opt-in instrumentation, which must add nothing to an app that brings its
   * own provider and instrumentations.
   */
  quietAfterHandover(): HandoverTracerProvider {
    return new HandoverTracerProvider(this.#own, this.#proxy, undefined, this.#installed);
  }

  getTracer(name: string, version?: string, options?: TracerOptions): Tracer {
    const key = `${name}@${version ?? ''}:${options?.schemaUrl ?? ''}`;
    let t = this.#tracers.get(key);
    if (t === undefined) {
      t = new HandoverTracer(this, this.#proxy, this.#own.getTracer(name, version, options), name, version, options);
      this.#tracers.set(key, t);
    }
    return t;
  }

  /** True once a span start went to another provider. */
  get handedOver(): boolean {
    return this.#handedOver;
  }

  /** @internal the delegate under which tracers use spanfuse's own tracer. */
  get installed(): TracerProvider {
    return this.#installed;
  }

  /** @internal the provider a tracer uses once `delegate` replaced ours. */
  successor(delegate: TracerProvider): TracerProvider {
    if (!this.#handedOver) {
      this.#handedOver = true;
      try {
        this.#onHandover?.();
      } catch {
        // Reporting must not break the app's span start.
      }
    }
    return this.#quiet ? NOOP_PROVIDER : delegate;
  }
}

class HandoverTracer implements Tracer {
  readonly #owner: HandoverTracerProvider;
  readonly #installed: TracerProvider;
  readonly #proxy: DelegateSource;
  readonly #own: Tracer;
  readonly #name: string;
  readonly #version: string | undefined;
  readonly #options: TracerOptions | undefined;
  /** The delegate the forwarded tracer was chosen for, and that tracer. */
  #from: TracerProvider | undefined;
  #forward: Tracer | undefined;

  constructor(
    owner: HandoverTracerProvider,
    proxy: DelegateSource,
    own: Tracer,
    name: string,
    version: string | undefined,
    options: TracerOptions | undefined,
  ) {
    this.#owner = owner;
    this.#installed = owner.installed;
    this.#proxy = proxy;
    this.#own = own;
    this.#name = name;
    this.#version = version;
    this.#options = options;
  }

  startSpan(name: string, options?: SpanOptions, context?: Context): Span {
    return this.#tracer().startSpan(name, options, context);
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(name: string, options: SpanOptions, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(name: string, options: SpanOptions, context: Context, fn: F): ReturnType<F>;
  startActiveSpan(...args: unknown[]): unknown {
    const tracer = this.#tracer();
    // Same arguments, same overload: the target tracer parses them.
    return (tracer as unknown as { startActiveSpan(...a: unknown[]): unknown }).startActiveSpan(...args);
  }

  #tracer(): Tracer {
    const delegate = this.#proxy.getDelegate();
    if (delegate === this.#installed) return this.#own;
    if (delegate !== this.#from || this.#forward === undefined) {
      this.#forward = this.#owner.successor(delegate).getTracer(this.#name, this.#version, this.#options);
      this.#from = delegate;
    }
    return this.#forward;
  }
}
