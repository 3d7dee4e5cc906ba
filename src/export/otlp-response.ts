import { readProtoFields } from './proto-reader.js';

export interface PartialSuccess {
  readonly rejectedProfiles: number;
  readonly errorMessage: string;
}

/**
 * `ExportProfilesServiceResponse.partial_success` (field 1:
 * rejected_profiles=1, error_message=2); undefined when absent or the body is
 * not that message.
 */
export function readPartialSuccess(body: Uint8Array | undefined): PartialSuccess | undefined {
  if (body === undefined || body.length === 0) return undefined;
  const top = readProtoFields(body);
  const ps = top?.find((f) => f.field === 1 && f.bytes !== undefined)?.bytes;
  if (ps === undefined) return undefined;
  const fields = readProtoFields(ps);
  if (fields === undefined) return undefined;
  let rejectedProfiles = 0;
  let errorMessage = '';
  for (const f of fields) {
    if (f.field === 1 && f.varint !== undefined) rejectedProfiles = Number(BigInt.asIntN(64, f.varint));
    else if (f.field === 2 && f.bytes !== undefined) errorMessage = Buffer.from(f.bytes).toString('utf8');
  }
  return { rejectedProfiles, errorMessage };
}

/** google.rpc.Status message (field 2), which OTLP servers send with 4xx/5xx. */
export function readStatusMessage(body: Uint8Array | undefined): string | undefined {
  if (body === undefined || body.length === 0) return undefined;
  const msg = readProtoFields(body)?.find((f) => f.field === 2 && f.bytes !== undefined)?.bytes;
  if (msg === undefined) return undefined;
  const text = Buffer.from(msg).toString('utf8');
  return /^[\x20-\x7e\s]*$/.test(text) ? text : undefined;
}

/**
 * Whether a 2xx body can be an `ExportProfilesServiceResponse`: empty (all
 * fields default), or only field 1 holding a well-formed partial_success.
 * Anything else (an HTML page, JSON, a proxy's text) means the request most
 * likely did not reach an OTLP profiles receiver.
 */
export function isExportProfilesResponse(body: Uint8Array | undefined): boolean {
  if (body === undefined || body.length === 0) return true;
  const top = readProtoFields(body);
  if (top === undefined || top.length === 0) return false;
  for (const f of top) {
    if (f.field !== 1 || f.bytes === undefined) return false;
    const inner = readProtoFields(f.bytes);
    if (inner === undefined) return false;
    for (const g of inner) {
      if (!((g.field === 1 && g.varint !== undefined) || (g.field === 2 && g.bytes !== undefined))) return false;
    }
  }
  return true;
}
