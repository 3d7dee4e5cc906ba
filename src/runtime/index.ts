export { currentThreadIdentity, listThreads, ThreadInventory, THREADPOOL_COMM } from './threads.js';
export type { ThreadIdentity, ThreadInfo, ThreadKind, ThreadpoolNaming } from './threads.js';
export { currentTid } from './thread-id.js';
