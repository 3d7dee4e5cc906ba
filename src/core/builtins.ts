import { createRequire } from 'node:module';

/**
 * Node built-ins whose ES module facade costs memory, loaded through
 * `require()` instead. Importing a built-in as an ES module reads every one
 * of its exports once, which runs their lazy getters: on Node 24 `node:http`'s
 * `WebSocket`, `CloseEvent` and `MessageEvent` load and compile the whole of
 * undici (+13.9 MB RSS, +2.4 MB of heap in an otherwise idle process, where a
 * `require('node:http')` costs nothing extra), `node:fs`'s streams and
 * `promises` +1.2 MB, `node:util`'s abort helpers +1.0 MB. Node 20 has no
 * such getters. A CommonJS app that never imports them as ES modules then
 * pays none of it; an app that does pays it already.
 */
const require = createRequire(import.meta.url);

export const fs = require('node:fs') as typeof import('node:fs');
export const http = require('node:http') as typeof import('node:http');
export const util = require('node:util') as typeof import('node:util');

/** node:https when first needed (an https export URL): it loads tls and crypto, +5 MB RSS on Node 24. */
export function https(): typeof import('node:https') {
  return require('node:https') as typeof import('node:https');
}
