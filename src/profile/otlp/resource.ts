import { hostname } from 'node:os';
import type { AttributeValue } from '../../core/window.js';

/**
 * Resource of exported profiles: runtime facts first, then the user's
 * resource attributes (OTEL_RESOURCE_ATTRIBUTES, code), then `service.name`,
 * so what the user set wins over what spanfuse guessed.
 */
export function profileResource(
  serviceName: string,
  attributes: Readonly<Record<string, AttributeValue>> = {},
): Record<string, AttributeValue> {
  let host = '';
  try {
    host = hostname();
  } catch {
    // Some sandboxes refuse; the attribute is then left out.
  }
  const out: Record<string, AttributeValue> = {
    'process.runtime.name': 'nodejs',
    'process.runtime.version': process.versions.node,
    'process.pid': process.pid,
  };
  if (host !== '') out['host.name'] = host;
  return { ...out, ...attributes, 'service.name': serviceName };
}
