// spanfuse's version lives in core (one reader of package.json for every stage).
export { spanfuseVersion } from '../../core/version.js';
