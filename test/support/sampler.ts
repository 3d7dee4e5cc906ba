import { detectContextMode } from '../../src/context/index.js';
import { WallSampler } from '../../src/sampler/index.js';
import type { WallSamplerOptions } from '../../src/sampler/index.js';

/**
 * A real wall sampler for the sampler tests: 1 ms sampling (plenty of
 * samples in a short test), per-sample CPU time, the runtime's context mode,
 * this thread as "main"; `opts` overrides any of it. Not started.
 */
export function testSampler(opts: Partial<WallSamplerOptions> = {}): WallSampler {
  return new WallSampler({
    samplingIntervalMicros: 1000,
    collectCpuTime: true,
    mode: detectContextMode(),
    thread: { tid: process.pid, name: 'main' },
    ...opts,
  });
}

/** Keep the thread on CPU for `ms` (the sampler then has frames to take). */
export function spin(ms: number): number {
  const end = Date.now() + ms;
  let x = 0;
  while (Date.now() < end) x = (x * 31 + 7) | 0;
  return x;
}
