import { trace } from '@opentelemetry/api';

const WARNED = Symbol.for('spanfuse.late-start.warned');
/** Handles of listening sockets in `process.getActiveResourcesInfo()`. */
const SERVER_RESOURCES = new Set(['TCPServerWrap', 'PipeServerWrap']);

/** Why this start is late, or undefined when it is not. */
export function lateStartReason(): string | undefined {
  try {
    if (trace.getActiveSpan() !== undefined) return 'a span is already active';
    const resources = process.getActiveResourcesInfo();
    if (resources.some((r) => SERVER_RESOURCES.has(r))) return 'a server is already listening';
  } catch {
    // cannot tell: say nothing
  }
  return undefined;
}

/**
 * Warn once per thread when spanfuse starts after the app is already serving
 * or tracing: requests under way and the modules loaded before it miss
 * their labels and context, and the first spans miss their counters.
 */
export function warnIfLateStart(): boolean {
  const holder = globalThis as { [WARNED]?: true };
  if (holder[WARNED]) return false;
  const reason = lateStartReason();
  if (reason === undefined) return false;
  holder[WARNED] = true;
  process.emitWarning(
    `spanfuse started late (${reason}): work already under way is profiled without its spans. ` +
      'Start it before the app: node --import spanfuse/register app.js (or --require spanfuse/register for CommonJS).',
    { code: 'SPANFUSE_LATE_START' },
  );
  return true;
}
