import type { Diagnostics } from '../core/diagnostics.js';
import type { WindowProfile } from '../core/window.js';
import { encodeWindowPprof, spanfuseVersion } from '../profile/index.js';
import { HttpTransport } from './http-transport.js';
import type { LaneLimits } from './lane.js';
import { multipartFile } from './multipart.js';
import { QueuedExporter } from './queued-exporter.js';
import type { RetryPolicy } from './retrying-transport.js';
import type { Transport, TransportRequest } from './transport.js';

export type PyroscopeAuth =
  | { readonly kind: 'none' }
  | { readonly kind: 'bearer'; readonly token: string }
  | { readonly kind: 'basic'; readonly user: string; readonly password: string };

export interface PyroscopeExporterOptions {
  /** Server base URL, e.g. `http://pyroscope:4040`; `/ingest` is appended. */
  readonly serverUrl: URL;
  readonly appName: string;
  readonly tags: Readonly<Record<string, string>>;
  readonly auth: PyroscopeAuth;
  /** Sent as `X-Scope-OrgID` (multi-tenant Pyroscope / Grafana Cloud). */
  readonly tenantId?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly retry: RetryPolicy;
  readonly queue: LaneLimits;
  readonly diagnostics: Diagnostics;
  readonly transport?: Transport;
  readonly name?: string;
}

/** `/ingest` URL of a Pyroscope server, keeping any path prefix it has. */
export function pyroscopeIngestUrl(server: URL): URL {
  const u = new URL(server.href);
  u.pathname = `${u.pathname.replace(/\/+$/, '')}/ingest`;
  u.search = '';
  return u;
}

/** `app{k=v,...}` with tag keys sorted; characters Pyroscope's parser splits on are replaced. */
export function pyroscopeName(app: string, tags: Readonly<Record<string, string>>): string {
  const clean = (s: string): string => s.replace(/[{}=,\s]/g, '_');
  const entries = Object.entries(tags)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${clean(k)}=${clean(v)}`);
  return `${clean(app)}{${entries.join(',')}}`;
}

/** The query of one ingest request: times in Unix seconds, sample rate in Hz. */
export function pyroscopeQuery(name: string, window: WindowProfile): string {
  const from = Number(window.startUnixNs / 1_000_000_000n);
  const until = Number((window.endUnixNs + 999_999_999n) / 1_000_000_000n);
  const sampleRate = Math.round(1_000_000 / window.samplingIntervalMicros);
  const q = new URLSearchParams({
    name,
    from: String(from),
    until: String(Math.max(until, from + 1)),
    spyName: 'nodespy',
    sampleRate: String(sampleRate),
    format: 'pprof',
  });
  return q.toString();
}

/**
 * Grafana Pyroscope exporter: each pprof of the window (wall/CPU, heap,
 * off-CPU) as gzip pprof in a multipart `/ingest` request.
 */
export function createPyroscopeExporter(o: PyroscopeExporterOptions): QueuedExporter {
  const headers: Record<string, string> = { ...o.headers, 'user-agent': `spanfuse/${spanfuseVersion()}` };
  if (o.auth.kind === 'bearer') headers['authorization'] = `Bearer ${o.auth.token}`;
  else if (o.auth.kind === 'basic') {
    headers['authorization'] = `Basic ${Buffer.from(`${o.auth.user}:${o.auth.password}`).toString('base64')}`;
  }
  if (o.tenantId !== undefined && o.tenantId !== '') headers['x-scope-orgid'] = o.tenantId;
  const transport = o.transport ?? new HttpTransport({ url: pyroscopeIngestUrl(o.serverUrl), headers });
  const name = pyroscopeName(o.appName, o.tags);
  return new QueuedExporter({
    name: o.name ?? 'pyroscope',
    transport,
    retry: o.retry,
    timeoutMs: o.timeoutMs,
    queue: o.queue,
    diagnostics: o.diagnostics,
    encode: async (window): Promise<TransportRequest[]> => {
      const query = pyroscopeQuery(name, window);
      return (await encodeWindowPprof(window)).map((part) => {
        const mp = multipartFile('profile', `${part.kind}.pprof`, part.bytes);
        return { body: mp.body, query, headers: { 'content-type': mp.contentType } };
      });
    },
  });
}
