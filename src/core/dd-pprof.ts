/**
 * The parts of @datadog/pprof that spanfuse uses, each loaded from its own
 * module of the package. The package's index also loads its source-map
 * support (the `source-map` package), its profile encoder and its logger,
 * none of which spanfuse uses: loading only the time profiler is ~3.4 MB less
 * RSS and ~0.6 MB less heap in a bare Node 24 process than loading the index,
 * ~1 MB less RSS with the whole preload (docs/performance.md, 2026-12-05 22Z).
 * These paths are the package's file layout, not its API: package.json pins
 * its version exactly, as for the other deep imports. They are the modules
 * the index itself loads, so an app that also loads the index shares their
 * state (one wall profiler per thread).
 */
import timeProfiler from '@datadog/pprof/out/src/time-profiler.js';

/** The wall profiler (the index's `time`, plus `getNativeThreadId`). */
export const time = timeProfiler;
