// Minimal types for the part of autocannon 9 the load generator uses
// (autocannon ships no types and @types/autocannon is not a dependency).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    interface Request {
      method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
      path?: string;
    }
    interface Options {
      url: string;
      connections?: number;
      pipelining?: number;
      duration?: number;
      requests?: Request[];
    }
    interface Result {
      duration: number;
      errors: number;
      timeouts: number;
      non2xx: number;
      requests: { total: number; average: number };
    }
    type Instance = EventEmitter;
  }
  function autocannon(opts: autocannon.Options, cb: (err: unknown, result: autocannon.Result) => void): autocannon.Instance;
  export default autocannon;
}
