import type { Diagnostics } from '../core/diagnostics.js';
import type { AttributeValue, WindowProfile } from '../core/window.js';
import { encodeOtlpRequestAsync, gzipForThread, spanfuseVersion } from '../profile/index.js';
import { HttpTransport } from './http-transport.js';
import type { LaneLimits } from './lane.js';
import { isExportProfilesResponse, readPartialSuccess, readStatusMessage } from './otlp-response.js';
import { QueuedExporter } from './queued-exporter.js';
import type { RetryPolicy } from './retrying-transport.js';
import type { Transport } from './transport.js';
import { failure, SUCCESS } from './types.js';

export interface OtlpHttpExporterOptions {
  /** Full profiles URL, e.g. `http://collector:4318/v1development/profiles`. */
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly compression: 'gzip' | 'none';
  readonly timeoutMs: number;
  readonly resource: Readonly<Record<string, AttributeValue>>;
  readonly retry: RetryPolicy;
  readonly queue: LaneLimits;
  readonly diagnostics: Diagnostics;
  /**
   * A window's request bytes (uncompressed). Default: encoded here; the
   * factory passes an encoding shared with the `otlp` file format.
   */
  readonly encode?: (window: WindowProfile) => Promise<Uint8Array>;
  /** For tests: a transport other than HTTP. */
  readonly transport?: Transport;
  readonly name?: string;
}

/**
 * OTLP/HTTP profiles exporter: one protobuf ExportProfilesServiceRequest per
 * window, gzip by default, POSTed to the profiles URL. Reads partial success
 * (200) and error bodies (4xx) and counts rejected profiles.
 */
export function createOtlpHttpExporter(o: OtlpHttpExporterOptions): QueuedExporter {
  const name = o.name ?? 'otlp';
  const headers: Record<string, string> = {
    ...o.headers,
    'content-type': 'application/x-protobuf',
    'user-agent': `spanfuse/${spanfuseVersion()}`,
  };
  if (o.compression === 'gzip') headers['content-encoding'] = 'gzip';
  const transport = o.transport ?? new HttpTransport({ url: o.url, headers });
  const encoderOptions = { resource: o.resource, scopeName: 'spanfuse', scopeVersion: spanfuseVersion() };
  const encode = o.encode ?? ((window: WindowProfile) => encodeOtlpRequestAsync(window, encoderOptions));
  return new QueuedExporter({
    name,
    transport,
    retry: o.retry,
    timeoutMs: o.timeoutMs,
    queue: o.queue,
    diagnostics: o.diagnostics,
    encode: async (window) => {
      const raw = await encode(window);
      const body = o.compression === 'gzip' ? await gzipForThread(raw) : raw;
      return [{ body }];
    },
    inspect: (result, count) => {
      const partial = readPartialSuccess(result.body);
      if (partial !== undefined && (partial.rejectedProfiles > 0 || partial.errorMessage !== '')) {
        count('rejectedProfiles', partial.rejectedProfiles);
        o.diagnostics.count(`export.${name}.rejected_profiles`, partial.rejectedProfiles);
        o.diagnostics.warnOnce(
          `export.${name}.partial`,
          `spanfuse: exporter ${name}: server rejected ${partial.rejectedProfiles} profile(s): ${partial.errorMessage || '(no message)'}`,
        );
      }
      if (result.kind === 'success') {
        if (!isExportProfilesResponse(result.body)) {
          // Counted as sent (the server said 2xx) but flagged: a proxy or a
          // wrong path often answers 200 with a page of its own.
          count('suspiciousResponses');
          o.diagnostics.count(`export.${name}.suspicious_responses`);
          o.diagnostics.warnOnce(
            `export.${name}.suspicious`,
            `spanfuse: exporter ${name}: HTTP ${result.status ?? 200} from ${o.url.href} but the body is not an ExportProfilesServiceResponse; is this an OTLP profiles endpoint? (counted in stats as suspiciousResponses)`,
          );
        }
        return SUCCESS;
      }
      const message = partial?.errorMessage || readStatusMessage(result.body);
      const reason = result.kind === 'retryable' ? `gave up after retries: ${result.reason}` : result.reason;
      return failure(message ? `${reason}: ${message}` : reason);
    },
  });
}
