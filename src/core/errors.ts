/**
 * Errors spanfuse throws at the user. Each has a stable `code` so callers can
 * branch on it without parsing messages. Runtime telemetry failures are never
 * thrown into the host; they go through {@link Diagnostics} instead.
 */
export type SpanfuseErrorCode =
  | 'SPANFUSE_INVALID_CONFIG'
  | 'SPANFUSE_ALREADY_STARTED'
  | 'SPANFUSE_UNSUPPORTED'
  | 'SPANFUSE_INVALID_INPUT';

export class SpanfuseError extends Error {
  readonly code: SpanfuseErrorCode;
  constructor(code: SpanfuseErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SpanfuseError';
    this.code = code;
  }
}

/** One problem found while validating configuration. */
export interface ConfigProblem {
  /** Option path or environment variable, e.g. `windowMs` or `SPANFUSE_WINDOW_MS`. */
  readonly field: string;
  /** What is wrong and how to fix it. */
  readonly message: string;
}

export class ConfigError extends SpanfuseError {
  readonly problems: readonly ConfigProblem[];
  constructor(problems: readonly ConfigProblem[]) {
    const lines = problems.map((p) => `  - ${p.field}: ${p.message}`);
    super('SPANFUSE_INVALID_CONFIG', `spanfuse: invalid configuration:\n${lines.join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}
