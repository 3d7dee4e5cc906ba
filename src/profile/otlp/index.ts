export { encodeOtlpRequest, encodeOtlpRequestAsync, profileIdBytes, FRAME_TYPE_KEY, FRAME_TYPE_V8JS } from './encode.js';
export type { OtlpEncoderOptions } from './encode.js';
export { profileResource } from './resource.js';
export { spanfuseVersion } from './version.js';
export { ProtoWriter } from './proto-writer.js';
