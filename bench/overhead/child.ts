/**
 * A child process with an IPC channel, pinned to a core with `taskset` when
 * asked, and helpers to wait for a message of a given type with a deadline.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ChildOptions {
  readonly nodeBin: string;
  readonly execArgv: readonly string[];
  readonly script: string;
  readonly env: NodeJS.ProcessEnv;
  /** CPU list for taskset, or undefined to leave unpinned. */
  readonly cpu?: string;
}

const TAIL_BYTES = 8192;

export class Child<In extends { type: string }, Out extends { type: string }> {
  readonly proc: ChildProcess;
  #inbox: Out[] = [];
  #waiters: Array<() => void> = [];
  #output = '';
  #exit: Promise<number | null>;
  /** Set on 'close': the process exited and its stdio and IPC are drained. */
  #closed = false;

  constructor(o: ChildOptions) {
    const argv = [...o.execArgv, o.script];
    this.proc =
      o.cpu === undefined
        ? spawn(o.nodeBin, argv, { stdio: ['ignore', 'pipe', 'pipe', 'ipc'], env: o.env })
        : spawn('taskset', ['-c', o.cpu, o.nodeBin, ...argv], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'], env: o.env });
    const keep = (b: Buffer): void => {
      this.#output = (this.#output + b.toString()).slice(-TAIL_BYTES);
    };
    // BENCH_CHILD_OUTPUT_DIR: every child's whole stdout also goes to
    // DIR/<pid>.out (V8's --trace-opt and --trace-deopt print there).
    const outDir = process.env['BENCH_CHILD_OUTPUT_DIR'];
    if (outDir !== undefined && outDir !== '') {
      const file = join(outDir, `${this.proc.pid ?? 'unknown'}.out`);
      this.proc.stdout?.on('data', (b: Buffer) => appendFileSync(file, b));
    }
    this.proc.stdout?.on('data', keep);
    this.proc.stderr?.on('data', keep);
    this.proc.on('message', (m: Out) => {
      this.#inbox.push(m);
      this.#wake();
    });
    this.#exit = new Promise((resolve) => {
      this.proc.on('close', (code) => {
        this.#closed = true;
        this.#wake();
        resolve(code);
      });
      this.proc.on('error', (err) => {
        keep(Buffer.from(String(err)));
        this.#closed = true;
        this.#wake();
        resolve(null);
      });
    });
  }

  #wake(): void {
    const w = this.#waiters;
    this.#waiters = [];
    for (const f of w) f();
  }

  get exited(): boolean {
    return this.#closed;
  }

  /** The last few KB of the child's stdout and stderr. */
  get outputTail(): string {
    return this.#output;
  }

  send(m: In): void {
    if (this.proc.connected) this.proc.send(m);
  }

  /** Next message of one of `types`; rejects on timeout, on exit, or on a `failed` message. */
  async next<T extends Out['type']>(types: readonly T[], timeoutMs: number): Promise<Extract<Out, { type: T }>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = this.#inbox.findIndex((m) => (types as readonly string[]).includes(m.type) || m.type === 'failed');
      if (i >= 0) {
        const [m] = this.#inbox.splice(i, 1);
        if (m !== undefined && m.type === 'failed' && !(types as readonly string[]).includes('failed')) {
          throw new Error(`child failed: ${String((m as { error?: unknown }).error)}`);
        }
        return m as Extract<Out, { type: T }>;
      }
      if (this.exited) throw new Error(`child exited (code ${String(this.proc.exitCode)}) while waiting for ${types.join('/')}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for ${types.join('/')}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** Wait for exit; kill this child (by its own pid) if it takes longer than `timeoutMs`. */
  async waitExit(timeoutMs: number): Promise<number | null> {
    const t = setTimeout(() => this.kill(), timeoutMs);
    const code = await this.#exit;
    clearTimeout(t);
    return code;
  }

  kill(): void {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill('SIGKILL');
  }
}
