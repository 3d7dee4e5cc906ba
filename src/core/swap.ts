/**
 * Run `fn` with `obj[key]` replaced by `make(original)`, and put the original
 * back when it returns or throws. For a dependency's internals that spanfuse
 * must bend for one synchronous call of its own (nothing else runs
 * meanwhile, so other users see them unchanged). When `obj[key]` is not a
 * function (a version without it), `fn` runs as is.
 */
export function withSwapped<F extends (...args: never[]) => unknown, T>(obj: object, key: string, make: (original: F) => F, fn: () => T): T {
  const target = obj as Record<string, unknown>;
  const original = target[key];
  if (typeof original !== 'function') return fn();
  target[key] = make(original as F);
  try {
    return fn();
  } finally {
    target[key] = original;
  }
}
