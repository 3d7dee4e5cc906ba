import { AsyncLocalStorage, createHook } from 'node:async_hooks';
import type { AsyncHook } from 'node:async_hooks';
import { time } from '../core/dd-pprof.js';
import type { ContextMode } from '../core/window.js';

/**
 * Makes the sampler see the span of the running continuation. Two
 * strategies, chosen once at start by feature detection; the context
 * manager drives them (see manager.ts).
 */
export interface SamplerBinder {
  readonly mode: ContextMode;
  enable(): void;
  disable(): void;
  /** Native context switches performed (hooks mode) or frames entered (ACF). */
  switches(): number;
}

/**
 * AsyncContextFrame: the sampler reads, at signal time, the value its own
 * AsyncLocalStorage key holds in the current frame. The context manager
 * uses that very key as its storage, so entering a span is ONE frame (the
 * stock manager's cost) whose holder carries the OpenTelemetry Context; the
 * span behind it is looked up only when a window is serialized.
 *
 * @datadog/pprof does not export its key; `enable()` finds it once by
 * watching which AsyncLocalStorage `time.runWithContext` enters, and checks
 * that the sampler reads back what was entered. Where that fails, `key` stays
 * undefined and the manager enters two frames (its own and the sampler's).
 * `setContext` is never used here: it writes one global slot, which labels
 * only part of a request and leaks the last span onto later samples.
 */
export class FrameBinder implements SamplerBinder {
  readonly mode = 'async-context-frame' as const;
  #key: AsyncLocalStorage<unknown> | undefined;
  #live = false;
  #entered = 0;
  #holderSlot = Symbol('spanfuse.holder');

  /** The sampler's key, once found (it stays valid for frames already entered). */
  get key(): AsyncLocalStorage<unknown> | undefined {
    return this.#key;
  }

  /** True while the sampler runs and this binding is on. */
  get live(): boolean {
    return this.#live && time.isStarted();
  }

  /**
   * The property under which an entered Context keeps its sampler holder, so
   * entering the same Context again reuses it. A new slot at every enable():
   * holders made for an earlier run of the native profiler are never reused.
   */
  get holderSlot(): symbol {
    return this.#holderSlot;
  }

  noteEntry(): void {
    this.#entered++;
  }

  enable(): void {
    if (!time.isStarted()) return;
    this.#key ??= findSamplerKey();
    this.#holderSlot = Symbol('spanfuse.holder');
    this.#live = true;
  }
  disable(): void {
    this.#live = false;
  }
  switches(): number {
    return this.#entered;
  }
}

/** The AsyncLocalStorage the wall profiler reads, or undefined if it cannot be proven. */
function findSamplerKey(): AsyncLocalStorage<unknown> | undefined {
  const proto = AsyncLocalStorage.prototype as { run: (...a: unknown[]) => unknown };
  const run = proto.run;
  const entered: AsyncLocalStorage<unknown>[] = [];
  try {
    proto.run = function (this: AsyncLocalStorage<unknown>, ...a: unknown[]): unknown {
      entered.push(this);
      return run.apply(this, a);
    };
    const probe = {};
    let holds = false;
    time.runWithContext(probe, () => {
      proto.run = run;
      const h = entered[0]?.getStore() as { 0?: unknown } | undefined;
      holds = h?.[0] === probe && time.getContext() === probe;
    });
    return holds ? entered[0] : undefined;
  } catch {
    return undefined;
  } finally {
    proto.run = run;
  }
}

/**
 * No AsyncContextFrame (Node 20, Node 22 without the flag): the sampler holds
 * one global context slot, so we rewrite it whenever the running continuation
 * changes: on entering a context (`with`) and in the async_hooks `before` of
 * every callback. The slot holds the span object itself (nothing is built
 * per span); it is only written when the span differs by identity from the
 * one already there.
 *
 * By default the slot is not cleared after a callback: it keeps the last
 * callback's span until the next callback's `before` rewrites it. Clearing
 * it in `after` (`clearBetweenCallbacks`, the behaviour up to 6e7e4cb)
 * costs a second JS hook per callback and promise reaction, and two native
 * writes per callback inside a span (each makes or drops a global handle
 * around a small heap block), where consecutive callbacks of one span
 * otherwise cost no write at all. What the stale slot can label: only code
 * that runs between two callbacks outside both (Node's own loop glue), as
 * samples whose leaf is `(idle)` or `(program)` are never given a span when
 * the window is built (see `packTimeProfile` in sampler/native-chunk.ts).
 */
export class HookBinder implements SamplerBinder {
  readonly mode = 'async-hooks' as const;
  readonly #active: () => object | undefined;
  readonly #clearBetweenCallbacks: boolean;
  /** What the slot holds now (undefined: no span). */
  current: object | undefined;
  #hook: AsyncHook | undefined;
  #switches = 0;

  /** `active` returns the span (or any per-span object) of the context active now. */
  constructor(active: () => object | undefined, opts: { readonly clearBetweenCallbacks?: boolean } = {}) {
    this.#active = active;
    this.#clearBetweenCallbacks = opts.clearBetweenCallbacks === true;
  }

  get enabled(): boolean {
    return this.#hook !== undefined;
  }

  enable(): void {
    if (this.#hook !== undefined) return;
    const before = (): void => {
      this.set(this.#active());
    };
    this.#hook = this.#clearBetweenCallbacks
      ? createHook({
          before,
          after: () => {
            if (this.current !== undefined) this.set(undefined);
          },
        })
      : createHook({ before });
    this.#hook.enable();
    this.set(this.#active());
  }

  disable(): void {
    this.#hook?.disable();
    this.#hook = undefined;
    this.current = undefined;
  }

  switches(): number {
    return this.#switches;
  }

  set(value: object | undefined): void {
    if (value === this.current) return;
    this.current = value;
    if (!time.isStarted()) return;
    this.#switches++;
    // No span: the slot is emptied (a sample then has no context, as an idle
    // sample in AsyncContextFrame mode). Writing an object instead would make
    // a native handle for it at every `after`, twice per callback in a span.
    time.setContext(value);
  }
}
