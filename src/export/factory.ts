import type { ResolvedExportConfig } from '../config/export.js';
import type { Diagnostics } from '../core/diagnostics.js';
import type { AttributeValue, WindowProfile } from '../core/window.js';
import { lazyRequire } from '../core/require-esm.js';
import { spanfuseVersion } from '../core/version.js';
import type * as OtlpEncodeModule from '../profile/otlp/encode.js';
import { profileResource } from '../profile/otlp/resource.js';
import { Scrubber } from '../profile/scrubber.js';
import { FileExporter } from './file-exporter.js';
import type * as OtlpExporterModule from './otlp-exporter.js';
import type * as PyroscopeExporterModule from './pyroscope-exporter.js';
import type { ProfileExporter } from './types.js';

/**
 * The OTLP encoder and the network exporters are loaded only when the
 * configuration names them, and here, while spanfuse starts: a worker must
 * not instantiate modules later (a termination during require(esm)'s
 * instantiation aborts Node 20, docs/workers.md). At defaults (pprof files)
 * no thread loads their ~15 modules. Without require(esm), naming them is an
 * error (SPANFUSE_UNSUPPORTED): profiling then stays off, the app runs.
 */
const requireWhenConfigured = lazyRequire(import.meta.url);

export interface ExporterDeps {
  readonly outputDir: string;
  /** User resource attributes (OTEL_RESOURCE_ATTRIBUTES and code). */
  readonly resource: Readonly<Record<string, AttributeValue>>;
  readonly serviceName: string;
  readonly diagnostics: Diagnostics;
}

/**
 * The exporters the config selects, in the order named. The file exporter,
 * when present, is a {@link FileExporter} (find it with `instanceof` to
 * `pin`/`unpin` windows that hold tail spans).
 */
export function createExporters(config: ResolvedExportConfig, deps: ExporterDeps): ProfileExporter[] {
  const resource = profileResource(deps.serviceName, deps.resource);
  const encoderOptions = { resource, scopeName: 'spanfuse', scopeVersion: spanfuseVersion() };
  const otlpNeeded = config.exporters.includes('otlp') || (config.exporters.includes('file') && config.file.formats.includes('otlp'));
  const otlp = otlpNeeded ? otlpEncoders(encoderOptions) : undefined;
  const out: ProfileExporter[] = [];
  for (const name of config.exporters) {
    if (name === 'file') {
      out.push(
        new FileExporter({
          dir: deps.outputDir,
          formats: config.file.formats,
          ...(otlp !== undefined ? { encodeOtlp: otlp.encode, encodeOtlpSync: otlp.encodeSync } : {}),
          maxFiles: config.file.maxFiles,
          maxBytes: config.file.maxBytes,
          diagnostics: deps.diagnostics,
        }),
      );
    } else if (name === 'otlp' && otlp !== undefined) {
      const { createOtlpHttpExporter } = requireWhenConfigured<typeof OtlpExporterModule>('./otlp-exporter.js', 'the otlp exporter');
      out.push(
        createOtlpHttpExporter({
          url: config.otlp.url,
          headers: config.otlp.headers,
          compression: config.otlp.compression,
          timeoutMs: config.otlp.timeoutMs,
          resource,
          encode: otlp.encode,
          retry: config.retry,
          queue: config.queue,
          diagnostics: deps.diagnostics,
        }),
      );
    } else if (name === 'pyroscope') {
      const { createPyroscopeExporter } = requireWhenConfigured<typeof PyroscopeExporterModule>('./pyroscope-exporter.js', 'the pyroscope exporter');
      const p = config.pyroscope;
      out.push(
        createPyroscopeExporter({
          serverUrl: p.url,
          appName: p.appName ?? deps.serviceName,
          tags: p.tags,
          auth: p.auth,
          ...(p.tenantId !== undefined ? { tenantId: p.tenantId } : {}),
          timeoutMs: p.timeoutMs,
          retry: config.retry,
          queue: config.queue,
          diagnostics: deps.diagnostics,
        }),
      );
    }
  }
  return out;
}

/** The OTLP request encoders (each window encoded once for every consumer), loading the encoder. */
function otlpEncoders(options: OtlpEncodeModule.OtlpEncoderOptions): {
  readonly encode: (w: WindowProfile) => Promise<Uint8Array>;
  readonly encodeSync: (w: WindowProfile) => Uint8Array;
} {
  const encoder = requireWhenConfigured<typeof OtlpEncodeModule>('../profile/otlp/encode.js', 'OTLP output');
  return {
    encode: oncePerWindow((w) => encoder.encodeOtlpRequestAsync(w, options)),
    encodeSync: (w) => encoder.encodeOtlpRequest(w, options),
  };
}

/**
 * `encode` run once per window however many exporters ask: the `otlp` file
 * format and the OTLP exporter send the same request bytes (same resource
 * and scope), and encoding a window costs as much as the rest of its export.
 * Kept only while the window object lives (the pipeline drops it once every
 * exporter has it).
 */
export function oncePerWindow(encode: (w: WindowProfile) => Promise<Uint8Array>): (w: WindowProfile) => Promise<Uint8Array> {
  const done = new WeakMap<WindowProfile, Promise<Uint8Array>>();
  return (w) => {
    let p = done.get(w);
    if (p === undefined) {
      p = encode(w);
      done.set(w, p);
    }
    return p;
  };
}

/** The scrub stage for the ExportPipeline, from the resolved config. */
export function createScrubber(config: ResolvedExportConfig): Scrubber {
  return new Scrubber(config.scrub);
}
