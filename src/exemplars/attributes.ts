/** Span attribute names written by the exemplar stage (DESIGN.md contract). */
export const ATTR_TAIL = 'profiler.tail';
export const ATTR_TAIL_QUANTILE = 'profiler.tail.quantile';
export const ATTR_TAIL_THRESHOLD_MS = 'profiler.tail.threshold_ms';
export const ATTR_EXEMPLAR_ID = 'profiler.exemplar.id';
export const ATTR_PYROSCOPE_PROFILE_ID = 'pyroscope.profile.id';
/**
 * How complete the sample figures are: `complete`, `partial` (the span began
 * before the oldest window still known), `hold_full`, `timeout` (its window
 * never closed in time), `shutdown` / `flush` (released early),
 * `no_profile` (no window was open when it ended), or `error` (computing the
 * figures failed; counted).
 */
export const ATTR_EXEMPLAR_STATUS = 'profiler.exemplar.status';

/** Suffixes of the figures; the span's own use prefix `profiler.`. */
export const FIG_CPU = 'cpu.time_ns';
export const FIG_WALL = 'wall.time_ns';
export const FIG_OFFCPU = 'offcpu.time_ns';
export const FIG_GC = 'gc.time_ns';
export const FIG_SAMPLES = 'samples';
export const FIG_TOP_FRAMES = 'top_frames';

/** Prefix of the figures of a span's own samples. */
export const PREFIX_SPAN = 'profiler.';
/**
 * Prefix of the figures over a local root span's whole local subtree (all
 * samples whose `local_root_span_id` is this span), e.g.
 * `profiler.subtree.cpu.time_ns`. Only on local root spans.
 */
export const PREFIX_SUBTREE = 'profiler.subtree.';
