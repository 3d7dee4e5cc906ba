import type { ResolvedExportConfig } from '../config/export.js';
import type { Diagnostics } from '../core/diagnostics.js';
import type { AttributeValue } from '../core/window.js';
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
  const out: ProfileExporter[] = [];
  for (const name of config.exporters) {
    if (name === 'file') {
      out.push(
        new FileExporter({
          dir: deps.outputDir,
          formats: config.file.formats,
          encodeOtlp: (w) => encodeOtlpRequestAsync(w, encoderOptions),
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

/** The scrub stage for the ExportPipeline, from the resolved config. */
export function createScrubber(config: ResolvedExportConfig): Scrubber {
  return new Scrubber(config.scrub);
}
