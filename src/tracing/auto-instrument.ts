import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { TracerProvider } from '@opentelemetry/api';
import type { Diagnostics } from '../core/diagnostics.js';

/** Which official instrumentations the preload enables (`SPANFUSE_AUTO_INSTRUMENT`). */
export type AutoInstrument = 'off' | 'http';

const HTTP_PACKAGE = '@opentelemetry/instrumentation-http';

interface Instrumentation {
  setTracerProvider(provider: TracerProvider): void;
  disable(): void;
}
type InstrumentationClass = new (config?: Record<string, unknown>) => Instrumentation;

export type AutoInstrumentResult =
  | { readonly enabled: 'http'; readonly from: string; disable(): void }
  | { readonly enabled: 'none'; readonly reason: string };

/**
 * Enable OpenTelemetry's HTTP server/client instrumentation with spans from
 * `provider`, for an app that brings no OpenTelemetry setup. The package is
 * looked up from each of `bases` (the app's folder, then spanfuse's); when it is
 * absent the caller gets the reason, to print once, and nothing changes.
 * `node:http`/`node:https` are required once here so they are patched before
 * the app creates its server (ESM imports of them share the patched object).
 */
export function enableAutoInstrumentation(
  kind: AutoInstrument,
  provider: TracerProvider,
  diag: Diagnostics,
  bases: readonly string[] = [join(process.cwd(), 'package.json'), import.meta.url],
): AutoInstrumentResult {
  if (kind === 'off') return { enabled: 'none', reason: 'off' };
  let found: { cls: InstrumentationClass; req: NodeJS.Require; path: string } | undefined;
  for (const base of bases) {
    try {
      const req = createRequire(base);
      const path = req.resolve(HTTP_PACKAGE);
      const mod = req(path) as { HttpInstrumentation?: unknown };
      if (typeof mod.HttpInstrumentation === 'function') {
        found = { cls: mod.HttpInstrumentation as InstrumentationClass, req, path };
        break;
      }
    } catch {
      // Not installed here; try the next place.
    }
  }
  if (found === undefined) {
    const reason = `${HTTP_PACKAGE} is not installed; install it (npm install ${HTTP_PACKAGE}) for request spans with no code`;
    diag.warnOnce('auto-instrument', `spanfuse: SPANFUSE_AUTO_INSTRUMENT=http: ${reason}. Profiling continues without it.`);
    return { enabled: 'none', reason };
  }
  try {
    const instrumentation = new found.cls({});
    instrumentation.setTracerProvider(provider);
    // require-in-the-middle patches core modules on their next require.
    found.req('node:http');
    found.req('node:https');
    return { enabled: 'http', from: found.path, disable: () => instrumentation.disable() };
  } catch (err) {
    diag.error('auto-instrument', err);
    return { enabled: 'none', reason: 'failed to enable' };
  }
}

/**
 * The preload's opt-in: instrument HTTP only when spanfuse's own provider
 * serves, with tracers that go quiet if the app registers a provider later
 * (its own instrumentations then make its spans; ours must add none).
 */
export function startAutoInstrumentation(
  kind: AutoInstrument,
  delegate: { quietAfterHandover(): TracerProvider } | undefined,
  diag: Diagnostics,
): AutoInstrumentResult {
  if (kind === 'off') return { enabled: 'none', reason: 'off' };
  if (delegate === undefined) {
    const reason = 'the app registered its own tracer provider (or tracerProvider is off); its instrumentations make the spans';
    diag.warnOnce('auto-instrument', `spanfuse: SPANFUSE_AUTO_INSTRUMENT=${kind} is ignored: ${reason}.`);
    return { enabled: 'none', reason };
  }
  return enableAutoInstrumentation(kind, delegate.quietAfterHandover(), diag);
}
