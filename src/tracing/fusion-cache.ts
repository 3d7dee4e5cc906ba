import type { Span } from '@opentelemetry/api';
import { SampleContextCache } from '../context/index.js';
import type { SampleContext } from '../context/index.js';
import type { FusionMonitor } from './fusion.js';

/**
 * The sample-context cache the context manager reads, with the fusion check
 * in front: every span entered is shown to the monitor until it reaches a
 * verdict, then the check is one boolean read.
 */
export class FusionCheckingCache extends SampleContextCache {
  readonly #monitor: FusionMonitor;

  constructor(monitor: FusionMonitor) {
    super();
    this.#monitor = monitor;
  }

  override get(span: Span): SampleContext {
    if (this.#monitor.watching) this.#monitor.check(span);
    return super.get(span);
  }
}
