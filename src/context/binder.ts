import { createHook } from 'node:async_hooks';
import type { AsyncHook } from 'node:async_hooks';
import { time } from '@datadog/pprof';
import type { ContextMode } from '../core/window.js';
import { NO_SPAN } from './sample-context.js';
import type { SampleContext } from './sample-context.js';

/**
 * Makes the sampler see the SampleContext of the running continuation.
 * Two strategies, chosen once at start by feature detection.
 */
export interface SamplerBinder {
  readonly mode: ContextMode;
  /** Run `fn` with the sampler bound to `sample` for it and its continuations. */
  run<R>(sample: SampleContext, fn: () => R): R;
  enable(): void;
  disable(): void;
  /** Native context switches performed (hooks mode) or frames entered (ACF). */
  switches(): number;
}

/**
 * AsyncContextFrame: the sampler reads our holder from the frame at signal
 * time, so entering it with `runWithContext` is all that is needed; the frame
 * follows `await`, timers and emitters by itself. `setContext` must not be
 * used here: it writes one global slot, which labels only part of a request
 * and leaks the last span onto later samples.
 */
export class FrameBinder implements SamplerBinder {
  readonly mode = 'async-context-frame' as const;
  #enabled = false;
  #entered = 0;

  run<R>(sample: SampleContext, fn: () => R): R {
    if (!this.#enabled || !time.isStarted()) return fn();
    this.#entered++;
    return time.runWithContext(sample, fn);
  }
  enable(): void {
    this.#enabled = true;
  }
  disable(): void {
    this.#enabled = false;
  }
  switches(): number {
    return this.#entered;
  }
}

/**
 * No AsyncContextFrame (Node 20, Node 22 without the flag): the sampler holds
 * one global context slot, so we rewrite it whenever the running continuation
 * changes: on entering a context (`with`) and in async_hooks `before`/`after`.
 * Cost control: the slot is only written when the SampleContext differs by
 * identity from the one already there, and SampleContexts are cached per span.
 */
export class HookBinder implements SamplerBinder {
  readonly mode = 'async-hooks' as const;
  readonly #activeSample: () => SampleContext;
  #current: SampleContext = NO_SPAN;
  #hook: AsyncHook | undefined;
  #switches = 0;

  /** `activeSample` returns the SampleContext of the OTel context now active. */
  constructor(activeSample: () => SampleContext) {
    this.#activeSample = activeSample;
  }

  run<R>(sample: SampleContext, fn: () => R): R {
    if (this.#hook === undefined) return fn();
    const prev = this.#current;
    this.#set(sample);
    try {
      return fn();
    } finally {
      this.#set(prev);
    }
  }

  enable(): void {
    if (this.#hook !== undefined) return;
    this.#hook = createHook({
      before: () => {
        this.#set(this.#activeSample());
      },
      // Between callbacks the thread runs no span's code (event loop, idle):
      // clear the slot so nothing outside a span is labelled with one.
      after: () => {
        this.#set(NO_SPAN);
      },
    });
    this.#hook.enable();
    this.#set(this.#activeSample());
  }

  disable(): void {
    this.#hook?.disable();
    this.#hook = undefined;
    this.#current = NO_SPAN;
  }

  switches(): number {
    return this.#switches;
  }

  #set(sample: SampleContext): void {
    if (sample === this.#current) return;
    this.#current = sample;
    if (!time.isStarted()) return;
    this.#switches++;
    time.setContext(sample);
  }
}
