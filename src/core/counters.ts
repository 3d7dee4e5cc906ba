/**
 * Kernel/runtime counters over a span's window. The runtime stage provides a
 * source; the exemplar stage calls `begin()` when a span starts and `end()`
 * when it ends, on the span's own thread, and puts the result on tail spans.
 *
 * `end()` returns only counters the machine offers: a missing counter is
 * absent, never zero. Keys are span attribute names, e.g.
 * `profiler.ctx_switches.voluntary`.
 */
export interface SpanCounterSource {
  /** Cheap snapshot at span start; the token is opaque to the caller. */
  begin(): unknown;
  /** Deltas since `begin()`; called once per span, on the same thread. */
  end(token: unknown): Readonly<Record<string, number>>;
}
