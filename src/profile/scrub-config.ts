/** The scrub policy, resolved (see config/export.ts for where it comes from). */
export interface ScrubConfig {
  /** Extra label keys (parts) whose values are always redacted. */
  readonly denyKeys: readonly string[];
  /** Label keys left untouched (neither key rules nor value patterns). */
  readonly allowKeys: readonly string[];
  /** Extra patterns; every match in any exported string is redacted. */
  readonly rules: readonly RegExp[];
  /** Paths under this folder are made relative to it. */
  readonly appRoot: string;
  /** User names that must not appear in paths (the process owner's by default). */
  readonly userNames: readonly string[];
}
