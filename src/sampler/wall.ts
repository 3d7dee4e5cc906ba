import { time } from '../core/dd-pprof.js';
import type { ContextMode, WindowProfile } from '../core/window.js';
import { withSwapped } from '../core/swap.js';
import { timedSelf } from '../core/self-time.js';
import { runSync } from '../core/slices.js';
import type { Steps } from '../core/slices.js';
import { spanSlots } from '../context/span-slots.js';
import { assembleSteps } from './assemble.js';
import type { ProfileChunk } from './assemble.js';
import { packTimeProfile, profilerPrototype, stopCapturing } from './native-chunk.js';
import type { ThreadIdentity } from './labels.js';
import { newProfileId, nowUnixNs } from './profile-id.js';

export interface WallSamplerOptions {
  readonly samplingIntervalMicros: number;
  readonly collectCpuTime: boolean;
  readonly mode: ContextMode;
  readonly thread: ThreadIdentity;
  /**
   * Window length (ms). With it, a window that would hold more than
   * `chunkSamples` samples is collected from the native profiler in chunks
   * (each stop holds the event loop for the conversion of its own samples
   * only) and merged when the window closes.
   */
  readonly windowMs?: number;
  /** Samples per native stop at most, about (default {@link DEFAULT_CHUNK_SAMPLES}). */
  readonly chunkSamples?: number;
  /**
   * Called when a native stop finds V8's profiler stuck for certain
   * (@datadog/pprof then restarts it fully; that stop's samples may be
   * missing).
   */
  readonly onStuckProfiler?: () => void;
  /**
   * Called when a native stop's profile only *might* show the stuck profiler
   * (see {@link certainStuckOnly}); nothing is restarted.
   */
  readonly onPossiblyStuckProfiler?: () => void;
}

/**
 * Samples one native stop converts at most. A stop holds the event loop for
 * V8's profile and @datadog/pprof's conversion of it to a JS tree (native),
 * then spanfuse's packing of that tree (native-chunk.ts). Under the
 * event-loop bench's span load, stops of ~490 samples (600 at most) took
 * 1.9-3.3 ms and stops of ~245 (300 at most) 1.2-2.6 ms when @datadog/pprof's
 * serializer still made each stop's pprof objects, so 300 keeps a stop, plus
 * the app's own work between two turns, under 5 ms, for twice the stops.
 * In the overhead bench's HTTP service (deeper stacks, ~500 tree nodes per
 * stop) the native part is 1.2-2.9 ms; the serializer made stops 3.7-10 ms,
 * the packing makes them about a third shorter (longest 5.6-6.0 against
 * 9.0-12.5 ms on Node 24, the first, on cold code, included;
 * `cost-2026-12-06T06Z.md`). At the defaults (10 ms, 10 s windows: at most
 * ~1,000 samples) a window is four chunks.
 */
export const DEFAULT_CHUNK_SAMPLES = 300;

/** When the first native stop comes, at most (ms after start; see `start`). */
const FIRST_CHUNK_MS = 1000;

/** A closed window whose profile is not built yet (see {@link WallSampler.windowSteps}). */
export interface RawWindow {
  readonly profileId: string;
  readonly seq: number;
  readonly startUnixNs: bigint;
  readonly endUnixNs: bigint;
  readonly chunks: readonly ProfileChunk[];
}

/**
 * The wall/CPU sampler of one thread, cut into windows. Each window has its
 * profile id from the moment it opens, so spans ending inside it can name it.
 *
 * Closing a window is split in two: `close` stops the native profile (it
 * restarts at once, so no time is lost) and keeps it as cheap chunks;
 * `windowSteps` builds the labelled pprof profile in small steps that can be
 * spread over event-loop turns.
 */
export class WallSampler {
  readonly #opts: WallSamplerOptions;
  #profileId = '';
  #startUnixNs = 0n;
  #seq = 0;
  #running = false;
  #chunks: ProfileChunk[] = [];
  #chunkTimer: NodeJS.Timeout | undefined;
  /** When the current window opened (performance.now()). */
  #openedAt = 0;
  #chunkErrors = 0;

  constructor(opts: WallSamplerOptions) {
    this.#opts = opts;
  }

  get running(): boolean {
    return this.#running;
  }

  /** Id of the window being collected now (empty before start). */
  get currentProfileId(): string {
    return this.#profileId;
  }

  /** Native stops inside a window that failed (their samples are lost). */
  get chunkErrors(): number {
    return this.#chunkErrors;
  }

  /**
   * Time between two stops inside a window (ms), or undefined for one stop
   * per window: the window cut into equal parts of at most `chunkSamples`
   * samples (at the defaults, 10 s windows of ~1,000 samples: a stop every
   * 2.5 s, four stops of ~250 samples per window).
   */
  get chunkMs(): number | undefined {
    const windowMs = this.#opts.windowMs;
    if (windowMs === undefined) return undefined;
    const samples = this.#opts.chunkSamples ?? DEFAULT_CHUNK_SAMPLES;
    const ms = Math.max(100, Math.floor((samples * this.#opts.samplingIntervalMicros) / 1000));
    const parts = Math.ceil(windowMs / ms);
    return parts > 1 ? Math.floor(windowMs / parts) : undefined;
  }

  start(): void {
    if (this.#running) return;
    if (time.isStarted()) {
      throw new Error('the @datadog/pprof wall profiler is already started by someone else in this thread');
    }
    time.start({
      intervalMicros: this.#opts.samplingIntervalMicros,
      withContexts: true,
      collectCpuTime: this.#opts.collectCpuTime,
      useCPED: this.#opts.mode === 'async-context-frame',
      // Off: with it, every native stop sleeps until the next SIGPROF before
      // and after the restart (17 ms of event-loop block per stop at 100 Hz,
      // measured; 0.8 ms without). The V8 condition it guards against (the
      // profiler's event thread stuck, empty profiles) is still detected at
      // each stop, and @datadog/pprof then restarts the profiler fully;
      // `onStuckProfiler` counts it.
      workaroundV8Bug: false,
      lineNumbers: false,
    });
    this.#running = true;
    this.#open();
    this.#scheduleChunk(true);
  }

  /**
   * The next stop inside the window in {@link chunkMs} (none without it),
   * then every {@link chunkMs}; each close starts the count again, so the
   * stops cut every window the same way, and none comes just before a close.
   */
  #scheduleChunk(first: boolean): void {
    this.#stopChunks();
    const every = this.chunkMs;
    const windowMs = this.#opts.windowMs;
    if (every === undefined || windowMs === undefined) return;
    this.#chunkTimer = setTimeout(
      () => {
        this.#chunkTimer = undefined;
        // Close enough to the close that the close's own stop takes these samples.
        if (performance.now() - this.#openedAt > windowMs - every / 2) return;
        this.#chunk();
        if (this.#running) this.#scheduleChunk(false);
      },
      // The first stop converts with cold code (compiled on first use, then
      // interpreted): measured 7-10 ms of event-loop block for ~590 samples
      // at 6 s, against 2-4 ms for later stops. An early first stop pays
      // that on the samples of its first second.
      first ? Math.min(FIRST_CHUNK_MS, every) : every,
    );
    this.#chunkTimer.unref();
  }

  /**
   * Close the current window: stop the native profile and keep it raw. With
   * `restart` the sampler keeps running and the next window opens at once.
   * Holds the event loop only for the native conversion of the last chunk.
   */
  close(restart: boolean): RawWindow | undefined {
    if (!this.#running) return undefined;
    const profileId = this.#profileId;
    const startUnixNs = this.#startUnixNs;
    const seq = this.#seq;
    const endUnixNs = nowUnixNs();
    if (restart) {
      this.#open();
      this.#scheduleChunk(false);
    } else this.#stopChunks();
    const chunks = this.#chunks;
    this.#chunks = [];
    try {
      chunks.push(this.#stopNative(restart));
    } finally {
      if (!restart) this.#running = false;
    }
    return { profileId, seq, startUnixNs, endUnixNs, chunks };
  }

  /** Build the window's profile from a closed raw window, in small steps. */
  *windowSteps(raw: RawWindow): Steps<WindowProfile> {
    let wall;
    try {
      wall = yield* assembleSteps(raw.chunks, this.#opts.thread, raw);
    } finally {
      // Its samples' span ids are resolved (or never will be).
      spanSlots.labelled();
    }
    // pprof has no attribute table: say how the labels were bound in a comment.
    // (The profile id is in the file name.)
    wall.comment = [wall.stringTable.dedup(`profiler.context.mode=${this.#opts.mode}`)];
    return {
      profileId: raw.profileId,
      seq: raw.seq,
      startUnixNs: raw.startUnixNs,
      endUnixNs: raw.endUnixNs,
      samplingIntervalMicros: this.#opts.samplingIntervalMicros,
      mode: this.#opts.mode,
      wall,
      attributes: {
        'profiler.context.mode': this.#opts.mode,
        'thread.id': this.#opts.thread.tid,
        'thread.name': this.#opts.thread.name,
      },
      tailSpans: [],
    };
  }

  /** Close the current window and build its profile at once (blocks for all of it). */
  rotate(restart: boolean): WindowProfile | undefined {
    const raw = this.close(restart);
    return raw === undefined ? undefined : runSync(this.windowSteps(raw));
  }

  /** One native stop, packed into a chunk inside it (see native-chunk.ts). */
  #stopNative(restart: boolean): ProfileChunk {
    const verdict = { possible: false };
    const chunk = timedSelf('stops', () =>
      packTimeProfile(
        certainStuckOnly(verdict, () => stopCapturing(() => time.stop(restart))),
        this.#opts.samplingIntervalMicros,
      ),
    );
    if (restart && time.v8ProfilerStuckEventLoopDetected() > 0) this.#opts.onStuckProfiler?.();
    if (verdict.possible) this.#opts.onPossiblyStuckProfiler?.();
    return chunk;
  }

  /** A stop inside the window: the samples so far become a chunk, kept for its window's close. */
  #chunk(): void {
    if (!this.#running) return;
    let chunk: ProfileChunk;
    try {
      chunk = this.#stopNative(true);
    } catch {
      this.#chunkErrors++;
      return;
    }
    this.#chunks.push(chunk);
  }

  #stopChunks(): void {
    if (this.#chunkTimer !== undefined) clearTimeout(this.#chunkTimer);
    this.#chunkTimer = undefined;
  }

  #open(): void {
    spanSlots.opened();
    this.#openedAt = performance.now();
    this.#profileId = newProfileId();
    this.#startUnixNs = nowUnixNs();
    this.#seq++;
  }
}

type StuckCheck = (this: unknown) => number;

/**
 * Run `stop` (one `time.stop`) so that @datadog/pprof restarts V8's profiler
 * from scratch only when the profile shows the stuck-processor bug for
 * certain. Its detector answers 0 (fine), 1 (possible: as many samples as
 * hits, which its authors say can be a false positive) or 2 (certain: no
 * hits at all), and `time.stop` restarts from scratch on either 1 or 2. A
 * restart from scratch makes V8 walk the whole heap three times and log every
 * compiled function again, the event loop held all along: 98 ms of
 * main-thread CPU in one `WallProfiler::Start` at a window close of the HTTP
 * bench service (perf at 999 Hz, 2026-12-04), where a 1 came once in ~24
 * stops under load; with a ~70 MB heap, 68 ms (Node 24) and 62 ms (Node 20)
 * against ~0.5 ms for a restarting stop (medians of 7,
 * `node dist/bench/sampler/full-restart.js`). A profiler really stuck collects no
 * hits, so the next stop (one chunk later) answers 2 and is restarted then.
 *
 * The check is the native class's method, replaced on its prototype for the
 * length of this one synchronous call: nothing else runs meanwhile, and
 * other users of @datadog/pprof in the process see it unchanged.
 * `verdict.possible` tells whether a 1 was turned into 0.
 */
export function certainStuckOnly<T>(verdict: { possible: boolean }, stop: () => T, proto: object = profilerPrototype()): T {
  const possibleAsFine = (original: StuckCheck): StuckCheck =>
    function (this: unknown): number {
      const v = original.call(this);
      if (v !== 1) return v;
      verdict.possible = true;
      return 0;
    };
  return withSwapped(proto, 'v8ProfilerStuckEventLoopDetected', possibleAsFine, stop);
}
