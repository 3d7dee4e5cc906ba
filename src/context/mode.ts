import { isAsyncContextFrameActive } from '@datadog/pprof/out/src/async-context-frame.js';
import type { ContextMode } from '../core/window.js';

/**
 * Which binding this runtime supports, by feature detection: AsyncContextFrame
 * puts the active frame in V8's continuation-preserved embedder data, which the
 * sampler can read at signal time. Without it, we re-bind on async switches.
 */
export function detectContextMode(): ContextMode {
  try {
    return isAsyncContextFrameActive() ? 'async-context-frame' : 'async-hooks';
  } catch {
    return 'async-hooks';
  }
}
