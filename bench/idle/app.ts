/**
 * An idle service: one 1 s interval timer and nothing else, for
 * bench/idle/run.ts. `IDLE_PPROF=1` runs @datadog/pprof's wall profiler the
 * way spanfuse configures it (CPED on AsyncContextFrame runtimes, contexts,
 * CPU time, 100 Hz, a restart every 10 s) and nothing of spanfuse, so the
 * difference between that and spanfuse is spanfuse's own fixed cost. Without
 * it nothing is imported (the "no profiler" row).
 */
if (process.env['IDLE_PPROF'] === '1') {
  const { time } = await import('@datadog/pprof');
  const { detectContextMode } = await import('../../src/context/index.js');
  time.start({
    intervalMicros: 10_000,
    withContexts: true,
    collectCpuTime: true,
    useCPED: detectContextMode() === 'async-context-frame',
    workaroundV8Bug: false,
    lineNumbers: false,
  });
  setInterval(() => time.stop(true), 10_000).unref();
}
setInterval(() => undefined, 1000);
