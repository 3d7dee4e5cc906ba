export { encodePprofGzip, encodeWindowPprof, encodeWindowPprofSync, pprofParts } from './pprof.js';
export { encodePprof, encodePprofSync } from './pprof-writer.js';
export type { EncodedPprof, PprofKind, PprofPart } from './pprof.js';
export { encodeOtlpRequest, encodeOtlpRequestAsync, profileIdBytes, profileResource, spanfuseVersion, FRAME_TYPE_KEY, FRAME_TYPE_V8JS } from './otlp/index.js';
export type { OtlpEncoderOptions } from './otlp/index.js';
export { Scrubber } from './scrubber.js';
export type { ScrubConfig } from './scrub-config.js';
export { PathScrubber } from './scrub-paths.js';
export { REDACTED, DENY_KEY_PARTS, luhn, looksRandom } from './scrub-rules.js';
