/**
 * What this process runs on, decided once. Linux on x86_64 or arm64 gets the
 * full set of signals; anything else degrades with one notice.
 */
export type Arch = 'x64' | 'arm64';

export interface Platform {
  readonly linux: boolean;
  /** Architecture whose syscall table we know; `undefined` elsewhere. */
  readonly arch: Arch | undefined;
  /** Why thread signals are unavailable, when they are. */
  readonly unsupportedReason: string | undefined;
}

export function detectPlatform(): Platform {
  const linux = process.platform === 'linux';
  const arch = process.arch === 'x64' || process.arch === 'arm64' ? process.arch : undefined;
  let unsupportedReason: string | undefined;
  if (!linux) unsupportedReason = `per-thread kernel signals need Linux /proc; this is ${process.platform}`;
  else if (arch === undefined) unsupportedReason = `no syscall table for ${process.arch}`;
  return { linux, arch, unsupportedReason };
}
