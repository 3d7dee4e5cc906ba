import { createRequire } from 'node:module';
import { join } from 'node:path';
import { context } from '@opentelemetry/api';
import type { TracerProvider } from '@opentelemetry/api';
import { isTracingSuppressed } from './sdk.js';
import type { Diagnostics } from '../core/diagnostics.js';

/** Which official instrumentations the preload enables (`SPANFUSE_AUTO_INSTRUMENT`). */
export type AutoInstrument = 'off' | 'http';
/** `armed`: waiting for the first HTTP request to decide; `http`: instrumenting; `none`: not. */
export type AutoInstrumentState = 'armed' | 'http' | 'none';

const HTTP_PACKAGE = '@opentelemetry/instrumentation-http';

interface ModuleDefinition {
  readonly name: string;
  readonly patch?: (moduleExports: unknown, moduleVersion?: string) => unknown;
}
interface Instrumentation {
  setTracerProvider(provider: TracerProvider): void;
  getModuleDefinitions(): ModuleDefinition[];
}
type InstrumentationClass = new (config?: Record<string, unknown>) => Instrumentation;

export interface AutoInstrumentation {
  state(): AutoInstrumentState;
}

type Fn = (this: unknown, ...args: unknown[]) => unknown;

/**
 * The preload's opt-in: OpenTelemetry's HTTP server/client instrumentation
 * for an app that brings no OpenTelemetry setup of its own.
 *
 * Nothing of OpenTelemetry's instrumentation machinery is created at preload:
 * its require hook is one per process and remembers every module it has
 * seen, so creating it now would keep an app's own HTTP instrumentation,
 * enabled later by its SDK, from ever patching `http` (the app would lose
 * its HTTP spans). Instead `http`/`https` get a pass-through trampoline on
 * `Server.prototype.emit`, `request` and `get`; the first call decides: if
 * spanfuse's provider still serves (the app registered none), the official
 * instrumentation is created and applied through its public module
 * definitions, with tracers that go quiet if an app provider appears later;
 * otherwise nothing is instrumented. Either way the trampolines step aside
 * (one boolean check per call where another wrapper sits on top of them).
 */
export function armAutoInstrumentation(
  kind: AutoInstrument,
  opts: {
    /** Tracers for the instrumentation (quiet after a handover). */
    provider: TracerProvider | undefined;
    /** Whether spanfuse's provider still serves, asked once at the first HTTP call. */
    spanfuseServes: () => boolean;
    diag: Diagnostics;
    /** Where to look for the package: the app's folder, then spanfuse's. */
    bases?: readonly string[];
  },
): AutoInstrumentation {
  let state: AutoInstrumentState = 'none';
  const result = { state: () => state };
  if (kind === 'off') return result;
  const { provider, diag } = opts;
  if (provider === undefined) {
    diag.warnOnce(
      'auto-instrument',
      `spanfuse: SPANFUSE_AUTO_INSTRUMENT=${kind} is ignored: the app registered its own tracer provider (or tracerProvider is off); its instrumentations make the spans.`,
    );
    return result;
  }
  const located = locate(opts.bases ?? [join(process.cwd(), 'package.json'), import.meta.url]);
  if (located === undefined) {
    diag.warnOnce(
      'auto-instrument',
      `spanfuse: SPANFUSE_AUTO_INSTRUMENT=http: ${HTTP_PACKAGE} is not installed (npm install ${HTTP_PACKAGE}); profiling continues without request spans.`,
    );
    return result;
  }
  const core = createRequire(import.meta.url);
  const modules: Record<string, Record<string, unknown>> = {
    http: core('node:http') as Record<string, unknown>,
    https: core('node:https') as Record<string, unknown>,
  };
  const restores: (() => void)[] = [];
  let decided = false;
  const decide = (): void => {
    decided = true;
    for (const r of restores) r();
    state = 'none';
    try {
      if (!opts.spanfuseServes()) return;
      const cls = located.req(located.path) as { HttpInstrumentation?: unknown };
      if (typeof cls.HttpInstrumentation !== 'function') throw new Error(`${HTTP_PACKAGE} exports no HttpInstrumentation`);
      // Not enabled: enabling would install the require hook for later modules too.
      const instrumentation = new (cls.HttpInstrumentation as InstrumentationClass)({ enabled: false });
      instrumentation.setTracerProvider(provider);
      for (const def of instrumentation.getModuleDefinitions()) {
        const exports = modules[def.name];
        if (exports !== undefined) def.patch?.(exports, process.versions.node);
      }
      state = 'http';
    } catch (err) {
      diag.error('auto-instrument', err);
    }
  };
  for (const exports of Object.values(modules)) {
    const proto = (exports.Server as { prototype: Record<string, unknown> } | undefined)?.prototype;
    if (proto !== undefined) trampoline(proto, 'emit', (args) => args[0] === 'request');
    trampoline(exports, 'request', () => true);
    trampoline(exports, 'get', () => true);
  }
  state = 'armed';
  return result;

  function trampoline(target: Record<string, unknown>, name: string, triggers: (args: unknown[]) => boolean): void {
    const original = target[name];
    if (typeof original !== 'function') return;
    const hadOwn = Object.prototype.hasOwnProperty.call(target, name);
    const fn = original as Fn;
    const wrapper: Fn = function (this: unknown, ...args: unknown[]): unknown {
      // spanfuse's own exporters (tracing suppressed) do not decide for the app.
      if (decided || !triggers(args) || isTracingSuppressed(context.active())) return fn.apply(this, args);
      // On top (nobody wrapped us): decide, then call again through whatever is installed now.
      const onTop = target[name] === wrapper;
      decide();
      const now = onTop ? (target[name] as Fn) : fn;
      return now.apply(this, args);
    };
    target[name] = wrapper;
    restores.push(() => {
      if (target[name] !== wrapper) return; // someone wrapped us: stay, as a pass-through
      if (hadOwn) target[name] = original;
      else delete target[name];
    });
  }
}

function locate(bases: readonly string[]): { req: NodeJS.Require; path: string } | undefined {
  for (const base of bases) {
    try {
      const req = createRequire(base);
      return { req, path: req.resolve(HTTP_PACKAGE) };
    } catch {
      // Not installed here; try the next place.
    }
  }
  return undefined;
}
