export { encodePprofGzip, encodeWindowPprof, pprofParts } from './pprof.js';
export type { EncodedPprof, PprofKind, PprofPart } from './pprof.js';
