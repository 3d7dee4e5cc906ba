import { isMainThread } from 'node:worker_threads';
import { context, ProxyTracerProvider, trace } from '@opentelemetry/api';
import type { ContextManager } from '@opentelemetry/api';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { HandoverTracerProvider, NOOP_PROVIDER } from './handover.js';
import { DeferredTracerProvider } from './sdk.js';

export type ContextManagerState = 'spanfuse' | 'spanfuse-replaced-app';
export type TracerProviderState = 'spanfuse' | 'app' | 'none';

export interface TracingInstallation {
  readonly contextManager: ContextManagerState;
  /** Who provides spans right now: spanfuse's provider, the app's, or nobody. */
  tracerProvider(): TracerProviderState;
  /** spanfuse's own provider, when it installed one (its SDK provider is created at start on the main thread, at the first getTracer() in a worker). */
  readonly provider: DeferredTracerProvider | undefined;
  /** The delegate spanfuse gave the API (tracers that hand over), when it installed one. */
  readonly delegate: HandoverTracerProvider | undefined;
  /** The app had registered a tracer provider before spanfuse was installed. */
  readonly appProviderFirst: boolean;
  uninstall(): Promise<void>;
}

/**
 * Make our context manager the global one, and, when the app has no tracer
 * provider and `provideTracer` is set, give the API's proxy provider a
 * delegate of ours WITHOUT registering it globally. An app that sets up its
 * own SDK later (`NodeSDK.start()`, `provider.register()`) then registers as
 * usual and replaces our delegate; tracers handed out before (by the
 * instrumentations NodeSDK registers before its provider) follow it, because
 * our delegate's tracers forward to whichever provider replaced it
 * (handover.ts). Nothing is refused or patched.
 */
export function installTracing(opts: {
  contextManager: ContextManager;
  provideTracer: boolean;
  resourceAttributes: Record<string, string | number | boolean>;
  spanProcessors: SpanProcessor[];
  onHandover?: () => void;
}): TracingInstallation {
  opts.contextManager.enable();
  let cmState: ContextManagerState = 'spanfuse';
  if (!context.setGlobalContextManager(opts.contextManager)) {
    // The app registered one first. Ours is the same AsyncLocalStorage manager
    // plus the sampler binding, so take its place rather than lose labels.
    context.disable();
    context.setGlobalContextManager(opts.contextManager);
    cmState = 'spanfuse-replaced-app';
  }

  const proxy = trace.getTracerProvider();
  const appProviderFirst = proxy instanceof ProxyTracerProvider ? hasDelegate(proxy) : true;
  let provider: DeferredTracerProvider | undefined;
  let delegate: HandoverTracerProvider | undefined;
  if (opts.provideTracer && proxy instanceof ProxyTracerProvider && !appProviderFirst) {
    provider = new DeferredTracerProvider(opts.resourceAttributes, opts.spanProcessors);
    // The main thread loads the SDK now, at start, as before: an app whose
    // first getTracer() comes in its first request would stall there for
    // it (60-90 ms). Worker threads, most of which never make a span, load
    // it at their first getTracer().
    if (isMainThread) provider.load();
    delegate = new HandoverTracerProvider(provider, proxy, opts.onHandover);
    proxy.setDelegate(delegate);
  }

  return {
    contextManager: cmState,
    provider,
    delegate,
    appProviderFirst,
    tracerProvider(): TracerProviderState {
      const current = trace.getTracerProvider();
      const active = current instanceof ProxyTracerProvider ? current.getDelegate() : current;
      if (delegate !== undefined && active === delegate) return 'spanfuse';
      return current instanceof ProxyTracerProvider && !hasDelegate(current) ? 'none' : 'app';
    },
    async uninstall(): Promise<void> {
      if (provider === undefined) return;
      if (proxy instanceof ProxyTracerProvider && proxy.getDelegate() === delegate) {
        // Tracers handed out forward to the no-op provider from now on.
        proxy.setDelegate(NOOP_PROVIDER);
      }
      await provider.shutdown();
    },
  };
}

function hasDelegate(proxy: ProxyTracerProvider): boolean {
  return proxy.getDelegateTracer('spanfuse-probe') !== undefined;
}

