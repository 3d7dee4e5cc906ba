/** Start-up checks of the running process. */
export { warnIfLateStart, lateStartReason } from './late-start.js';
