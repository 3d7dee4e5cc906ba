export { WallSampler } from './wall.js';
export type { WallSamplerOptions } from './wall.js';
export type { ThreadIdentity } from './labels.js';
export { newProfileId, nowUnixNs } from './profile-id.js';
