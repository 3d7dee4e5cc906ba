import type { ResolvedExportConfig } from '../config/export.js';
import type { Diagnostics } from '../core/diagnostics.js';
import type { AttributeValue, WindowProfile } from '../core/window.js';
import { encodeOtlpRequest, encodeOtlpRequestAsync, profileResource, Scrubber, spanfuseVersion } from '../profile/index.js';
import { FileExporter } from './file-exporter.js';
import { createOtlpHttpExporter } from './otlp-exporter.js';
import { createPyroscopeExporter } from './pyroscope-exporter.js';
import type { ProfileExporter } from './types.js';

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
  const encodeOtlp = oncePerWindow((w) => encodeOtlpRequestAsync(w, encoderOptions));
  const out: ProfileExporter[] = [];
  for (const name of config.exporters) {
    if (name === 'file') {
      out.push(
        new FileExporter({
          dir: deps.outputDir,
          formats: config.file.formats,
          encodeOtlp,
          encodeOtlpSync: (w) => encodeOtlpRequest(w, encoderOptions),
          maxFiles: config.file.maxFiles,
          maxBytes: config.file.maxBytes,
          diagnostics: deps.diagnostics,
        }),
      );
    } else if (name === 'otlp') {
      out.push(
        createOtlpHttpExporter({
          url: config.otlp.url,
          headers: config.otlp.headers,
          compression: config.otlp.compression,
          timeoutMs: config.otlp.timeoutMs,
          resource,
          encode: encodeOtlp,
          retry: config.retry,
          queue: config.queue,
          diagnostics: deps.diagnostics,
        }),
      );
    } else {
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
