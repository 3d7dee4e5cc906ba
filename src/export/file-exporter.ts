import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Diagnostics } from '../core/diagnostics.js';
import { describe } from '../core/diagnostics.js';
import type { WindowProfile } from '../core/window.js';
import { encodeWindowPprof, encodeWindowPprofSync } from '../profile/pprof.js';
import type { FileKind } from './file-names.js';
import { parseWindowFileName, TEMP_PREFIX, windowFileName } from './file-names.js';
import { Lane } from './lane.js';
import { RetentionIndex } from './retention.js';
import type { ExportOutcome, ProfileExporter } from './types.js';
import { failure, SUCCESS } from './types.js';
import { fs } from '../core/builtins.js';

const { mkdirSync, renameSync, unlinkSync, writeFileSync } = fs;

export type FileFormat = 'pprof' | 'otlp';

export interface FileExporterOptions {
  /** Output folder; created (recursively) if missing. */
  readonly dir: string;
  /** What to write per window; default `['pprof']`. `otlp` needs `encodeOtlp`. */
  readonly formats?: readonly FileFormat[];
  /** Encodes a window as an OTLP ExportProfilesServiceRequest. */
  readonly encodeOtlp?: (window: WindowProfile) => Promise<Uint8Array> | Uint8Array;
  /** The same, synchronously, for `writeSync` at process exit. */
  readonly encodeOtlpSync?: (window: WindowProfile) => Uint8Array;
  /** Retention: at most this many files in `dir` (default 1000). */
  readonly maxFiles?: number;
  /** Retention: at most this many bytes of files in `dir` (default 256 MiB). */
  readonly maxBytes?: number;
  /** Windows waiting to be written; the oldest is dropped beyond this (default 4: windows are large). */
  readonly maxQueuedWindows?: number;
  /** Distinct pinned profile ids kept at most (default 10000). */
  readonly maxPins?: number;
  readonly diagnostics: Diagnostics;
  /** Exporter name in stats and diagnostics (default `file`). */
  readonly name?: string;
}

const MiB = 1024 * 1024;
const STALE_TEMP_MS = 10 * 60_000;

/**
 * Writes each window to its own files in a folder: gzip pprof (`*.pb.gz`,
 * plus `*.heap.pb.gz` / `*.offcpu.pb.gz`) and optionally the OTLP request
 * (`*.otlp.pb`). Each file appears atomically (temp file + rename). The folder
 * is kept within a file count and a byte budget by deleting the oldest
 * windows first, except windows pinned because their tail spans still point
 * at them.
 */
export class FileExporter implements ProfileExporter {
  readonly name: string;
  readonly dir: string;
  readonly #formats: ReadonlySet<FileFormat>;
  readonly #encodeOtlp: FileExporterOptions['encodeOtlp'];
  readonly #encodeOtlpSync: FileExporterOptions['encodeOtlpSync'];
  readonly #diagnostics: Diagnostics;
  readonly #retention: RetentionIndex;
  readonly #lane: Lane<WindowProfile>;
  readonly #pins = new Map<string, number>();
  /** Windows accepted by export() and not yet fully written: drainSync writes them at exit. */
  readonly #unwritten = new Set<WindowProfile>();
  readonly #maxPins: number;
  #ready: Promise<void> | undefined;
  #shutdown: Promise<void> | undefined;
  #counters = { windowsWritten: 0, filesWritten: 0, bytesWritten: 0, filesDeleted: 0, filesDeletedForSpace: 0, writeErrors: 0, pinsRefused: 0 };

  constructor(options: FileExporterOptions) {
    this.name = options.name ?? 'file';
    this.dir = options.dir;
    this.#formats = new Set(options.formats ?? ['pprof']);
    this.#encodeOtlp = options.encodeOtlp;
    this.#encodeOtlpSync = options.encodeOtlpSync;
    this.#diagnostics = options.diagnostics;
    this.#maxPins = options.maxPins ?? 10_000;
    this.#retention = new RetentionIndex({
      maxFiles: options.maxFiles ?? 1000,
      maxBytes: options.maxBytes ?? 256 * MiB,
    });
    this.#lane = new Lane(
      { maxItems: options.maxQueuedWindows ?? 4, maxBytes: Number.MAX_SAFE_INTEGER },
      (w) => this.#write(w),
    );
  }

  export(window: WindowProfile): Promise<ExportOutcome> {
    this.#unwritten.add(window);
    return this.#lane.enqueue(window, 0).finally(() => this.#unwritten.delete(window));
  }

  /**
   * At process exit: write every window still queued or being encoded,
   * synchronously, then stop accepting. A window whose async write was half
   * done is written again whole (each file is replaced atomically).
   */
  drainSync(): void {
    const windows = [...this.#unwritten];
    this.#unwritten.clear();
    this.#lane.close('written synchronously at exit');
    for (const w of windows) this.writeSync(w);
  }

  /**
   * Keep the files of `profileId` out of retention until `unpin` (counted:
   * pin twice, unpin twice). Pinning an id not yet written is fine.
   */
  pin(profileId: string): void {
    const n = this.#pins.get(profileId);
    if (n === undefined && this.#pins.size >= this.#maxPins) {
      this.#counters.pinsRefused++;
      this.#diagnostics.count(`export.${this.name}.pins_refused`);
      return;
    }
    this.#pins.set(profileId, (n ?? 0) + 1);
  }

  unpin(profileId: string): void {
    const n = this.#pins.get(profileId);
    if (n === undefined) return;
    if (n <= 1) this.#pins.delete(profileId);
    else this.#pins.set(profileId, n - 1);
  }

  isPinned(profileId: string): boolean {
    return this.#pins.has(profileId);
  }

  /** Waits for queued windows to be written. */
  flush(): Promise<void> {
    return this.#lane.idle();
  }

  shutdown(deadlineMs: number): Promise<void> {
    this.#shutdown ??= this.#doShutdown(deadlineMs);
    return this.#shutdown;
  }

  stats(): Readonly<Record<string, number>> {
    const lane = this.#lane.stats();
    return {
      ...this.#counters,
      queued: lane.queued,
      dropped: lane.dropped,
      filesOnDisk: this.#retention.count,
      bytesOnDisk: this.#retention.bytes,
      pinned: this.#pins.size,
    };
  }

  /**
   * Write a window synchronously, for `process.exit()` where no event-loop
   * turn is left. Atomic like `export`; retention covers the files this
   * process knows of (the next run's scan covers the rest). Never throws;
   * false when it failed (counted).
   */
  writeSync(window: WindowProfile): boolean {
    try {
      mkdirSync(this.dir, { recursive: true });
      const files: { name: string; bytes: Uint8Array }[] = [];
      if (this.#formats.has('pprof')) {
        for (const part of encodeWindowPprofSync(window)) {
          files.push({ name: windowFileName(window.startUnixNs, window.profileId, part.kind), bytes: part.bytes });
        }
      }
      if (this.#formats.has('otlp') && this.#encodeOtlpSync !== undefined) {
        files.push({ name: windowFileName(window.startUnixNs, window.profileId, 'otlp'), bytes: this.#encodeOtlpSync(window) });
      }
      for (const f of files) {
        for (;;) {
          const tmp = join(this.dir, `${TEMP_PREFIX}${process.pid}-${randomBytes(6).toString('hex')}`);
          try {
            writeFileSync(tmp, f.bytes, { mode: 0o600 });
            renameSync(tmp, join(this.dir, f.name));
            break;
          } catch (err) {
            try {
              unlinkSync(tmp);
            } catch {
              // nothing to clean up
            }
            if (!isDiskFull(err) || !this.#freeOldestSync(window.profileId)) throw err;
          }
        }
        this.#counters.filesWritten++;
        this.#counters.bytesWritten += f.bytes.byteLength;
        this.#retention.remove(f.name);
        this.#retention.add({ name: f.name, profileId: window.profileId, bytes: f.bytes.byteLength });
      }
      this.#counters.windowsWritten++;
      this.#enforceRetentionSync();
      return true;
    } catch (err) {
      this.#counters.writeErrors++;
      this.#diagnostics.error(`export.${this.name}`, err);
      return false;
    }
  }

  async #doShutdown(deadlineMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, deadlineMs));
      timer.unref();
    });
    await Promise.race([this.#lane.idle(), deadline]);
    clearTimeout(timer);
    this.#lane.close('dropped: file exporter shut down');
  }

  #prepare(): Promise<void> {
    this.#ready ??= this.#scan();
    return this.#ready;
  }

  /** Create the folder and index files left by an earlier run, so retention spans restarts. */
  async #scan(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const names = await readdir(this.dir);
    for (const name of names) {
      try {
        if (name.startsWith(TEMP_PREFIX)) {
          // Left by a crashed writer; a fresh one may belong to a live process.
          const t = await stat(join(this.dir, name));
          if (Date.now() - t.mtimeMs > STALE_TEMP_MS) await unlink(join(this.dir, name));
          continue;
        }
        const parsed = parseWindowFileName(name);
        if (parsed === undefined) continue;
        const s = await stat(join(this.dir, name));
        if (s.isFile()) this.#retention.add({ name, profileId: parsed.profileId, bytes: s.size });
      } catch {
        // A file that vanished meanwhile is simply not indexed.
      }
    }
  }

  async #write(window: WindowProfile): Promise<ExportOutcome> {
    try {
      try {
        await this.#prepare();
      } catch (err) {
        this.#ready = undefined; // try creating the folder again next time
        throw err;
      }
      const files: { name: string; bytes: Uint8Array }[] = [];
      if (this.#formats.has('pprof')) {
        for (const part of await encodeWindowPprof(window)) {
          files.push({ name: windowFileName(window.startUnixNs, window.profileId, part.kind), bytes: part.bytes });
        }
      }
      if (this.#formats.has('otlp') && this.#encodeOtlp !== undefined) {
        const bytes = await this.#encodeOtlp(window);
        files.push({ name: windowFileName(window.startUnixNs, window.profileId, 'otlp' satisfies FileKind), bytes });
      }
      for (const f of files) await this.#writeMakingRoom(f.name, f.bytes, window.profileId);
      this.#counters.windowsWritten++;
      await this.#enforceRetention();
      return SUCCESS;
    } catch (err) {
      this.#counters.writeErrors++;
      this.#diagnostics.error(`export.${this.name}`, err);
      return failure(describe(err));
    }
  }

  /**
   * Write one file; when the disk is full, delete the oldest unpinned window
   * (never `profileId`'s own files) and try again, until it fits or nothing
   * is left to delete.
   */
  async #writeMakingRoom(name: string, bytes: Uint8Array, profileId: string): Promise<void> {
    for (;;) {
      try {
        await this.#writeAtomic(name, bytes);
        return;
      } catch (err) {
        if (!isDiskFull(err) || !(await this.#freeOldest(profileId))) throw err;
      }
    }
  }

  /** Delete the files of the oldest unpinned window other than `keep`; false when there is none. */
  async #freeOldest(keep: string): Promise<boolean> {
    const victims = this.#retention.oldestUnpinned((id) => this.#pins.has(id), keep);
    if (victims.length === 0) return false;
    this.#warnDiskFull();
    for (const f of victims) {
      await unlink(join(this.dir, f.name)).catch(() => undefined);
      this.#retention.remove(f.name);
      this.#counters.filesDeleted++;
      this.#counters.filesDeletedForSpace++;
    }
    return true;
  }

  #freeOldestSync(keep: string): boolean {
    const victims = this.#retention.oldestUnpinned((id) => this.#pins.has(id), keep);
    if (victims.length === 0) return false;
    this.#warnDiskFull();
    for (const f of victims) {
      try {
        unlinkSync(join(this.dir, f.name));
      } catch {
        // already gone
      }
      this.#retention.remove(f.name);
      this.#counters.filesDeleted++;
      this.#counters.filesDeletedForSpace++;
    }
    return true;
  }

  #warnDiskFull(): void {
    this.#diagnostics.count(`export.${this.name}.disk_full`);
    this.#diagnostics.warnOnce(
      `export.${this.name}.disk_full`,
      `spanfuse: the disk of ${this.dir} is full; deleting the oldest profile windows to keep the newest (further deletions are counted, not logged)`,
    );
  }

  async #writeAtomic(name: string, bytes: Uint8Array): Promise<void> {
    const tmp = join(this.dir, `${TEMP_PREFIX}${process.pid}-${randomBytes(6).toString('hex')}`);
    try {
      await writeFile(tmp, bytes, { mode: 0o600 });
      await rename(tmp, join(this.dir, name));
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') this.#ready = undefined; // folder was removed
      throw err;
    }
    this.#retention.remove(name); // rewriting the same window replaces its entry
    this.#retention.add({ name, profileId: parseWindowFileName(name)?.profileId ?? '', bytes: bytes.byteLength });
    this.#counters.filesWritten++;
    this.#counters.bytesWritten += bytes.byteLength;
  }

  /** Retention for the exit path (files this process indexed; the next run's scan covers the rest). */
  #enforceRetentionSync(): void {
    for (const f of this.#retention.plan((id) => this.#pins.has(id))) {
      try {
        unlinkSync(join(this.dir, f.name));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') continue;
      }
      this.#retention.remove(f.name);
      this.#counters.filesDeleted++;
    }
  }

  async #enforceRetention(): Promise<void> {
    for (const f of this.#retention.plan((id) => this.#pins.has(id))) {
      try {
        await unlink(join(this.dir, f.name));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
          this.#diagnostics.error(`export.${this.name}.retention`, err);
          continue;
        }
      }
      this.#retention.remove(f.name);
      this.#counters.filesDeleted++;
    }
  }
}

function isDiskFull(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}
