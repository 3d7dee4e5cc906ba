import { time } from '@datadog/pprof';
import type { ContextMode, WindowProfile } from '../core/window.js';
import { labelGenerator } from './labels.js';
import type { ThreadIdentity } from './labels.js';
import { newProfileId, nowUnixNs } from './profile-id.js';

export interface WallSamplerOptions {
  readonly samplingIntervalMicros: number;
  readonly collectCpuTime: boolean;
  readonly mode: ContextMode;
  readonly thread: ThreadIdentity;
}

/**
 * The wall/CPU sampler of one thread, cut into windows. Each window has its
 * profile id from the moment it opens, so spans ending inside it can name it.
 */
export class WallSampler {
  readonly #opts: WallSamplerOptions;
  #profileId = '';
  #startUnixNs = 0n;
  #seq = 0;
  #running = false;

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
      workaroundV8Bug: true,
      lineNumbers: false,
    });
    this.#running = true;
    this.#open();
  }

  /**
   * Close the current window and return it. With `restart` the sampler keeps
   * running and the next window opens before this one is serialized, so the
   * serialization cost lands in the next window and no time is lost.
   */
  rotate(restart: boolean): WindowProfile | undefined {
    if (!this.#running) return undefined;
    const profileId = this.#profileId;
    const startUnixNs = this.#startUnixNs;
    const seq = this.#seq;
    const endUnixNs = nowUnixNs();
    if (restart) this.#open();
    const wall = time.stop(restart, labelGenerator(this.#opts.thread));
    if (!restart) this.#running = false;
    // pprof has no attribute table: say how the labels were bound in a comment.
    // (The profile id is in the file name.)
    wall.comment = [wall.stringTable.dedup(`profiler.context.mode=${this.#opts.mode}`)];
    return {
      profileId,
      seq,
      startUnixNs,
      endUnixNs,
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

  #open(): void {
    this.#profileId = newProfileId();
    this.#startUnixNs = nowUnixNs();
    this.#seq++;
  }
}
