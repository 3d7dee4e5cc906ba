/** The thread a sampler runs in, as its samples are labelled. */
export interface ThreadIdentity {
  readonly tid: number;
  readonly name: string;
}
