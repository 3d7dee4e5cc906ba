import type { Diagnostics } from '../core/diagnostics.js';
import { describe } from '../core/diagnostics.js';
import type { WindowProfile } from '../core/window.js';
import { withinDeadline } from './deadline.js';
import type { ExportOutcome, ProfileExporter, WindowScrubber } from './types.js';

export interface ExportPipelineOptions {
  readonly exporters: readonly ProfileExporter[];
  /** Applied once per window before any exporter sees it. */
  readonly scrubber?: WindowScrubber;
  readonly diagnostics: Diagnostics;
  /** Windows waiting for the scrub stage; the oldest is dropped beyond this (default 4). */
  readonly maxPendingWindows?: number;
}

export interface ExporterCounters {
  succeeded: number;
  failed: number;
  inFlight: number;
}

export interface ExportPipelineStats {
  submitted: number;
  /** Windows dropped before export because the pending backlog was full. */
  droppedPending: number;
  /** Windows refused because the pipeline was shut down. */
  refusedAfterShutdown: number;
  /** Windows not exported because scrubbing failed (never sent unscrubbed). */
  scrubFailures: number;
  pending: number;
  exporters: Record<string, ExporterCounters & Readonly<Record<string, number>>>;
  scrub: Readonly<Record<string, number>>;
}

/**
 * Hands windows from the sampler to the exporters. `submit` only queues
 * (bounded, drop-oldest) and returns; scrubbing and encoding run later on the
 * event loop, one window at a time in slices, and every exporter gets the
 * scrubbed window on its own, so a slow or failing exporter never holds up
 * another.
 */
export class ExportPipeline {
  readonly #exporters: readonly ProfileExporter[];
  readonly #scrubber: WindowScrubber | undefined;
  readonly #diagnostics: Diagnostics;
  readonly #maxPending: number;
  readonly #pending: WindowProfile[] = [];
  /** The window taken off `#pending` and being scrubbed now (exitSync must not lose it). */
  #scrubbing: WindowProfile | undefined;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #perExporter = new Map<string, ExporterCounters>();
  #pump: Promise<void> | undefined;
  #closed = false;
  #exitedSync = false;
  #shutdown: Promise<void> | undefined;
  #counters = { submitted: 0, droppedPending: 0, refusedAfterShutdown: 0, scrubFailures: 0 };

  constructor(options: ExportPipelineOptions) {
    this.#exporters = [...options.exporters];
    this.#scrubber = options.scrubber;
    this.#diagnostics = options.diagnostics;
    this.#maxPending = Math.max(1, options.maxPendingWindows ?? 4);
    for (const e of this.#exporters) this.#perExporter.set(e.name, { succeeded: 0, failed: 0, inFlight: 0 });
  }

  /** Queue a window for export. Synchronous, never throws, never waits. */
  submit(window: WindowProfile): void {
    try {
      if (this.#closed) {
        this.#counters.refusedAfterShutdown++;
        this.#diagnostics.count('export.refused_after_shutdown');
        return;
      }
      this.#counters.submitted++;
      this.#pending.push(window);
      while (this.#pending.length > this.#maxPending) {
        this.#pending.shift();
        this.#counters.droppedPending++;
        this.#diagnostics.count('export.dropped_pending');
      }
      this.#kick();
    } catch (err) {
      this.#diagnostics.error('export.submit', err);
    }
  }

  /** Resolves once every submitted window reached every exporter's outcome. */
  async flush(): Promise<void> {
    // Bounded: each round settles what was in flight; new submits may add more.
    for (let round = 0; round < 64; round++) {
      if (this.#pending.length > 0) this.#kick();
      if (this.#pump !== undefined) await this.#pump;
      if (this.#inFlight.size === 0 && this.#pending.length === 0) return;
      await Promise.all([...this.#inFlight]);
    }
  }

  /**
   * Keep the window `profileId` out of every exporter's retention (files)
   * until `unpin`: call it when a tail span points at the window, unpin once
   * the span was exported. Counted per call (pin twice, unpin twice).
   */
  pin(profileId: string): void {
    for (const e of this.#exporters) {
      try {
        e.pin?.(profileId);
      } catch (err) {
        this.#diagnostics.error(`export.${e.name}.pin`, err);
      }
    }
  }

  unpin(profileId: string): void {
    for (const e of this.#exporters) {
      try {
        e.unpin?.(profileId);
      } catch (err) {
        this.#diagnostics.error(`export.${e.name}.pin`, err);
      }
    }
  }

  /**
   * For `process.exit()`: no event-loop turn is left, so the pending windows
   * and `last` are scrubbed and written synchronously by the exporters that
   * can (files); network exporters count them as dropped. The pipeline is
   * closed afterwards. Never throws.
   */
  exitSync(last?: WindowProfile): void {
    try {
      this.#closed = true;
      this.#exitedSync = true;
      // What exporters accepted but have not written yet (encoding, queued) goes first.
      for (const e of this.#exporters) {
        try {
          e.drainSync?.();
        } catch (err) {
          this.#diagnostics.error(`export.${e.name}`, err);
        }
      }
      const windows = this.#scrubbing === undefined ? [] : [this.#scrubbing];
      this.#scrubbing = undefined;
      windows.push(...this.#pending.splice(0, this.#pending.length));
      if (last !== undefined) windows.push(last);
      for (const w of windows) {
        let out: WindowProfile;
        try {
          out = this.#scrubber ? this.#scrubber.scrub(w) : w;
        } catch (err) {
          this.#counters.scrubFailures++;
          this.#diagnostics.error('export.scrub', err);
          continue;
        }
        for (const e of this.#exporters) {
          const c = this.#perExporter.get(e.name);
          let ok = false;
          try {
            ok = e.writeSync?.(out) ?? false;
          } catch (err) {
            this.#diagnostics.error(`export.${e.name}`, err);
          }
          if (c !== undefined) {
            if (ok) c.succeeded++;
            else c.failed++;
          }
          if (!ok) this.#diagnostics.count(`export.${e.name}.dropped_at_exit`);
        }
      }
    } catch (err) {
      this.#diagnostics.error('export.exit', err);
    }
  }

  /** Stop accepting, flush within `deadlineMs`, shut the exporters down. Idempotent. */
  shutdown(deadlineMs: number): Promise<void> {
    this.#shutdown ??= this.#doShutdown(deadlineMs);
    return this.#shutdown;
  }

  stats(): ExportPipelineStats {
    const exporters: ExportPipelineStats['exporters'] = {};
    for (const e of this.#exporters) {
      const own = safeStats(e);
      const mine = this.#perExporter.get(e.name) ?? { succeeded: 0, failed: 0, inFlight: 0 };
      exporters[e.name] = { ...own, ...mine };
    }
    let scrub: Readonly<Record<string, number>> = {};
    try {
      scrub = this.#scrubber?.stats?.() ?? {};
    } catch {
      // Stats are best effort.
    }
    return { ...this.#counters, pending: this.#pending.length, exporters, scrub };
  }

  async #doShutdown(deadlineMs: number): Promise<void> {
    this.#closed = true;
    const end = Date.now() + Math.max(0, deadlineMs);
    await withinDeadline(this.flush(), deadlineMs);
    const left = Math.max(0, end - Date.now());
    await withinDeadline(
      Promise.all(
        this.#exporters.map(async (e) => {
          try {
            await e.shutdown(left);
          } catch (err) {
            this.#diagnostics.error(`export.${e.name}.shutdown`, err);
          }
        }),
      ),
      left,
    );
    this.#pending.length = 0;
  }

  #kick(): void {
    if (this.#pump !== undefined || this.#pending.length === 0) return;
    this.#pump = this.#runPump();
  }

  /** One window at a time, an event-loop turn before each: submit() never does the work. */
  async #runPump(): Promise<void> {
    try {
      while (this.#pending.length > 0) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        const window = this.#pending.shift();
        if (window === undefined) break;
        await this.#processOne(window);
      }
    } catch (err) {
      this.#diagnostics.error('export.pipeline', err);
    } finally {
      this.#pump = undefined;
    }
  }

  async #processOne(window: WindowProfile): Promise<void> {
    let out: WindowProfile;
    this.#scrubbing = window;
    try {
      const s = this.#scrubber;
      out = s === undefined ? window : s.scrubAsync !== undefined ? await s.scrubAsync(window) : s.scrub(window);
    } catch (err) {
      // Never export a window that failed its scrub: it may hold secrets.
      this.#counters.scrubFailures++;
      this.#diagnostics.error('export.scrub', err);
      return;
    } finally {
      if (this.#scrubbing === window) this.#scrubbing = undefined;
    }
    // exitSync ran meanwhile (a synchronous exit inside an await cannot, but a
    // shutdown path may): it already wrote this window.
    if (this.#closed && this.#exitedSync) return;
    for (const e of this.#exporters) this.#track(e, out);
  }

  #track(exporter: ProfileExporter, window: WindowProfile): void {
    const c = this.#perExporter.get(exporter.name);
    if (c === undefined) return;
    c.inFlight++;
    const p = this.#run(exporter, window).then((outcome) => {
      c.inFlight--;
      if (outcome.kind === 'success') c.succeeded++;
      else {
        c.failed++;
        this.#diagnostics.count(`export.${exporter.name}.failed`);
        this.#diagnostics.warnOnce(`export.${exporter.name}`, `spanfuse: exporter ${exporter.name} failed: ${outcome.reason}`);
      }
      this.#inFlight.delete(p);
    });
    this.#inFlight.add(p);
  }

  async #run(exporter: ProfileExporter, window: WindowProfile): Promise<ExportOutcome> {
    try {
      return await exporter.export(window);
    } catch (err) {
      return { kind: 'failure', reason: describe(err) };
    }
  }
}

function safeStats(e: ProfileExporter): Readonly<Record<string, number>> {
  try {
    return e.stats?.() ?? {};
  } catch {
    return {};
  }
}
