/** Limits on what the file exporter keeps on disk. */
export interface RetentionLimits {
  readonly maxFiles: number;
  readonly maxBytes: number;
}

export interface RetainedFile {
  readonly name: string;
  readonly profileId: string;
  readonly bytes: number;
}

/**
 * The set of files on disk, oldest first (names sort by time). `plan()` says
 * which to delete to get back under the limits: oldest first, never a pinned
 * window's files, never the files of the newest window.
 */
export class RetentionIndex {
  readonly #limits: RetentionLimits;
  #files: RetainedFile[] = [];
  #bytes = 0;

  constructor(limits: RetentionLimits) {
    this.#limits = limits;
  }

  add(file: RetainedFile): void {
    // Names carry the start time, so this keeps the list sorted even when a
    // scan of an existing folder adds files in directory order.
    const i = this.#files.findIndex((f) => f.name > file.name);
    if (i === -1) this.#files.push(file);
    else this.#files.splice(i, 0, file);
    this.#bytes += file.bytes;
  }

  remove(name: string): void {
    const i = this.#files.findIndex((f) => f.name === name);
    if (i === -1) return;
    const [f] = this.#files.splice(i, 1);
    if (f) this.#bytes -= f.bytes;
  }

  /**
   * Files to delete, oldest first, whole windows at a time (a window's wall,
   * off-CPU, heap and OTLP files go together); the caller removes each once
   * deleted. Never a pinned window, never the newest window.
   */
  plan(isPinned: (profileId: string) => boolean): RetainedFile[] {
    const newest = this.#files[this.#files.length - 1]?.profileId;
    let count = this.#files.length;
    let bytes = this.#bytes;
    const out: RetainedFile[] = [];
    const done = new Set<string>();
    for (const f of this.#files) {
      if (count <= this.#limits.maxFiles && bytes <= this.#limits.maxBytes) break;
      if (done.has(f.profileId) || f.profileId === newest || isPinned(f.profileId)) continue;
      done.add(f.profileId);
      for (const g of this.#files) {
        if (g.profileId !== f.profileId) continue;
        out.push(g);
        count--;
        bytes -= g.bytes;
      }
    }
    return out;
  }

  /**
   * The files of the oldest window that is neither pinned nor `exclude` (the
   * window being written): what to delete when the disk is full. Empty when
   * there is none.
   */
  oldestUnpinned(isPinned: (profileId: string) => boolean, exclude: string): RetainedFile[] {
    const victim = this.#files.find((f) => f.profileId !== exclude && !isPinned(f.profileId))?.profileId;
    return victim === undefined ? [] : this.#files.filter((f) => f.profileId === victim);
  }

  get count(): number {
    return this.#files.length;
  }

  get bytes(): number {
    return this.#bytes;
  }
}
