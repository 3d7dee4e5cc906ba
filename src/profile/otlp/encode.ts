import { runSliced, runSync, staged, STEP_ENTRIES } from '../../core/slices.js';
import type { Steps } from '../../core/slices.js';
import type { AttributeValue, WindowProfile } from '../../core/window.js';
import { pprofParts } from '../pprof.js';
import { Dictionary, writeAnyValue } from './dictionary.js';
import type { OtlpProfilePart } from './from-pprof.js';
import { fromPprof, writeSamples } from './from-pprof.js';
import { ProtoWriter } from './proto-writer.js';

export interface OtlpEncoderOptions {
  /** Resource attributes: `service.name`, `process.runtime.*`, `host.name`, user attributes. */
  readonly resource: Readonly<Record<string, AttributeValue>>;
  readonly scopeName: string;
  readonly scopeVersion: string;
}

export const FRAME_TYPE_KEY = 'profile.frame.type';
export const FRAME_TYPE_V8JS = 'v8js';

/**
 * Encode one window as an OTLP `ExportProfilesServiceRequest`
 * (opentelemetry-proto v1.11.0, profiles v1development): one Profile per
 * sample type of each of the window's pprof profiles (wall, heap, off-CPU),
 * all sharing one deduplicated dictionary and the window's profile id.
 */
export function encodeOtlpRequest(window: WindowProfile, options: OtlpEncoderOptions): Uint8Array {
  return runSync(encodeSteps(window, options, Infinity));
}

/**
 * Same bytes as {@link encodeOtlpRequest}, but the work is cut into steps of
 * `sliceSamples` samples, run a couple of milliseconds at a time with an
 * event-loop turn between them, so a large window never blocks the host for
 * long.
 */
export function encodeOtlpRequestAsync(
  window: WindowProfile,
  options: OtlpEncoderOptions,
  sliceSamples = STEP_ENTRIES,
): Promise<Uint8Array> {
  return runSliced(staged('encode', encodeSteps(window, options, sliceSamples)));
}

function* encodeSteps(window: WindowProfile, options: OtlpEncoderOptions, slice: number): Steps<Uint8Array> {
  const dict = new Dictionary();
  const frameType = dict.attribute(FRAME_TYPE_KEY, FRAME_TYPE_V8JS);
  const parts: OtlpProfilePart[] = [];
  for (const part of pprofParts(window)) parts.push(...(yield* fromPprof(dict, part.profile, frameType, slice)));
  const profileAttrs = Object.entries(window.attributes).map(([k, v]) => dict.attribute(k, v));
  const profileId = profileIdBytes(window.profileId);
  const duration = window.endUnixNs > window.startUnixNs ? window.endUnixNs - window.startUnixNs : 0n;

  let samples = 0;
  for (const p of parts) samples += p.observations.samples.length;
  const w = new ProtoWriter(Math.max(64 * 1024, samples * 40));

  w.fork(1); // ResourceProfiles
  w.fork(1); // Resource
  for (const [k, v] of Object.entries(options.resource)) {
    w.fork(1); // KeyValue
    w.string(1, k, true);
    writeAnyValue(w, 2, v);
    w.join();
  }
  w.join();
  w.fork(2); // ScopeProfiles
  w.fork(1); // InstrumentationScope
  w.string(1, options.scopeName);
  w.string(2, options.scopeVersion);
  w.join();
  for (const p of parts) {
    w.fork(2); // Profile
    w.fork(1);
    w.varint(1, p.typeStr);
    w.varint(2, p.unitStr);
    w.join();
    yield* writeSamples(w, 2, p, slice);
    w.fixed64(3, window.startUnixNs);
    w.varint(4, duration);
    if (p.periodTypeStr !== 0 || p.periodUnitStr !== 0) {
      w.fork(5);
      w.varint(1, p.periodTypeStr);
      w.varint(2, p.periodUnitStr);
      w.join();
    }
    w.varint(6, p.period);
    w.bytes(7, profileId);
    w.packedVarints(11, profileAttrs);
    w.join();
  }
  w.join();
  w.join();
  dict.write(w, 2);
  return w.finish();
}

/** 16 bytes from the window's 32-hex id; empty (unset) if it is malformed. */
export function profileIdBytes(hex: string): Uint8Array {
  return /^[0-9a-fA-F]{32}$/.test(hex) ? Buffer.from(hex, 'hex') : new Uint8Array(0);
}
