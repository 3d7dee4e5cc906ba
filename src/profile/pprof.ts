import type { Profile } from '../core/pprof.js';
import type { WindowProfile } from '../core/window.js';
import { gzipForThread, gzipSyncForThread } from './gzip.js';
import { encodePprof, encodePprofSync } from './pprof-writer.js';

/** Which pprof profiles a window carries, with the file suffix each gets. */
export type PprofKind = 'wall' | 'heap' | 'offcpu';

export interface PprofPart {
  readonly kind: PprofKind;
  readonly profile: Profile;
}

/** The window's pprof profiles in a fixed order: wall, heap, off-CPU. */
export function pprofParts(window: WindowProfile): PprofPart[] {
  const parts: PprofPart[] = [{ kind: 'wall', profile: window.wall }];
  if (window.heap) parts.push({ kind: 'heap', profile: window.heap });
  if (window.offCpu) parts.push({ kind: 'offcpu', profile: window.offCpu });
  return parts;
}

/** Serialize and gzip one pprof profile, off the hot path (async encode + gzip). */
export async function encodePprofGzip(profile: Profile): Promise<Buffer> {
  const raw = await encodePprof(profile);
  return gzipForThread(raw);
}

export interface EncodedPprof {
  readonly kind: PprofKind;
  readonly bytes: Buffer;
}

// Several exporters (files, Pyroscope) need the same gzip pprof of the same
// window; the cache is keyed by the window object so it dies with it.
const cache = new WeakMap<WindowProfile, Promise<EncodedPprof[]>>();

/** Gzip pprof of every profile in the window, encoded once per window object. */
export function encodeWindowPprof(window: WindowProfile): Promise<EncodedPprof[]> {
  let p = cache.get(window);
  if (p === undefined) {
    p = Promise.all(
      pprofParts(window).map(async (part) => ({ kind: part.kind, bytes: await encodePprofGzip(part.profile) })),
    );
    cache.set(window, p);
  }
  return p;
}

/** Gzip pprof of every profile in the window, synchronously (process exit only). */
export function encodeWindowPprofSync(window: WindowProfile): EncodedPprof[] {
  return pprofParts(window).map((part) => ({ kind: part.kind, bytes: gzipSyncForThread(encodePprofSync(part.profile)) }));
}
