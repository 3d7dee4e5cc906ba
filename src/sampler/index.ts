export { WallSampler, DEFAULT_CHUNK_SAMPLES } from './wall.js';
export type { RawWindow, WallSamplerOptions } from './wall.js';
export type { ProfileChunk } from './assemble.js';
export type { ThreadIdentity } from './labels.js';
export { newProfileId, nowUnixNs } from './profile-id.js';
