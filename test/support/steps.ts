import type { Steps } from '../../src/core/slices.js';

/** Run `steps` to the end here, counting the yields between them (what runSliced would spread over turns). */
export function drainSteps<T>(steps: Steps<T>): { yields: number; value: T } {
  let yields = 0;
  let r = steps.next();
  while (r.done !== true) {
    yields++;
    r = steps.next();
  }
  return { yields, value: r.value };
}
