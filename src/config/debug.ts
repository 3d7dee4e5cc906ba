import { envBool, envInt, envString } from './env.js';
import type { EnvSource, Problems } from './env.js';

/** The local debug endpoint (pprof, tail spans, flamegraphs), as given in code. Off unless a port is set. */
export interface DebugOptions {
  /** Port to serve on; 0 picks a free one. Env `SPANFUSE_DEBUG_PORT`. Unset: no endpoint. */
  port?: number;
  /** Interface to bind. Env `SPANFUSE_DEBUG_HOST`. Default `127.0.0.1`. */
  host?: string;
  /** Bearer token every request must carry. Env `SPANFUSE_DEBUG_TOKEN`. */
  token?: string;
  /**
   * Allow a host that is not a loopback address (it then also needs a
   * token). Env `SPANFUSE_DEBUG_ALLOW_REMOTE`. Default false.
   */
  allowRemote?: boolean;
}

export interface DebugConfig {
  readonly enabled: boolean;
  readonly port: number;
  readonly host: string;
  readonly token: string | undefined;
  readonly allowRemote: boolean;
}

const PORT_BOUNDS = { min: 0, max: 65535 };

export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Merge (code > env > default) and validate; never throws, adds to `problems`. */
export function resolveDebugConfig(options: DebugOptions | undefined, env: EnvSource, problems: Problems): DebugConfig {
  const port = options?.port ?? envInt(env, 'SPANFUSE_DEBUG_PORT', problems, PORT_BOUNDS);
  const host = options?.host ?? envString(env, 'SPANFUSE_DEBUG_HOST') ?? '127.0.0.1';
  const token = options?.token ?? envString(env, 'SPANFUSE_DEBUG_TOKEN');
  const allowRemote = options?.allowRemote ?? envBool(env, 'SPANFUSE_DEBUG_ALLOW_REMOTE', problems) ?? false;
  const off: DebugConfig = { enabled: false, port: 0, host: '127.0.0.1', token: undefined, allowRemote: false };
  if (port === undefined) return off;
  let ok = true;
  if (typeof port !== 'number' || !Number.isSafeInteger(port) || port < PORT_BOUNDS.min || port > PORT_BOUNDS.max) {
    problems.add('debug.port', `expected a whole number from 0 to 65535, got ${String(port)}`);
    ok = false;
  }
  if (typeof host !== 'string' || host.trim() === '') {
    problems.add('debug.host', 'expected an interface address such as 127.0.0.1');
    ok = false;
  } else if (!isLoopbackHost(host) && allowRemote !== true) {
    problems.add('debug.host', `${host} is not a loopback address; the debug endpoint serves profiles of this process: set debug.allowRemote (SPANFUSE_DEBUG_ALLOW_REMOTE=true) and a token to expose it`);
    ok = false;
  } else if (!isLoopbackHost(host) && (token === undefined || token.length < 16)) {
    problems.add('debug.token', `a debug endpoint on ${host} needs a token of at least 16 characters (SPANFUSE_DEBUG_TOKEN)`);
    ok = false;
  }
  if (token !== undefined && (typeof token !== 'string' || token === '' || /\s/.test(token))) {
    problems.add('debug.token', 'expected a non-empty token without spaces');
    ok = false;
  }
  if (typeof allowRemote !== 'boolean') {
    problems.add('debug.allowRemote', `expected true or false, got ${String(allowRemote)}`);
    ok = false;
  }
  return ok ? { enabled: true, port: port, host, token, allowRemote: allowRemote === true } : off;
}
