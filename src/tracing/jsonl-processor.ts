import { mkdirSync, renameSync, statSync } from 'node:fs';
import { mkdir, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Diagnostics } from '../core/diagnostics.js';
import { hrTimeToNanos } from './time.js';
import { appendWholeLines, appendWholeLinesSync } from './whole-lines.js';
import type { LinesWritten } from './whole-lines.js';

export interface JsonlSpanProcessorOptions {
  readonly dir: string;
  /** `spans.jsonl` rotates to `spans.1.jsonl` beyond this size. */
  readonly maxFileBytes: number;
  /** Spans buffered in memory before the oldest are dropped (bytes). */
  readonly maxBufferBytes?: number;
  readonly flushIntervalMs?: number;
  readonly diagnostics: Diagnostics;
}

export const SPANS_FILE = 'spans.jsonl';

/**
 * The embedded span output: one JSON object per ended span in
 * `<dir>/spans.jsonl`. Lines are buffered and appended once a second (timer
 * unref'd), and written synchronously by `flushSync()` on process exit, so no
 * span is lost when the app calls `process.exit()`. Memory is bounded: beyond
 * `maxBufferBytes` the oldest lines are dropped and counted.
 */
export class JsonlSpanProcessor implements SpanProcessor {
  readonly #opts: Required<Omit<JsonlSpanProcessorOptions, 'diagnostics'>>;
  readonly #diag: Diagnostics;
  #lines: string[] = [];
  #bytes = 0;
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> = Promise.resolve();
  #dirReady = false;
  #closed = false;
  #written = 0;
  #dropped = 0;

  constructor(options: JsonlSpanProcessorOptions) {
    this.#opts = {
      dir: options.dir,
      maxFileBytes: options.maxFileBytes,
      maxBufferBytes: options.maxBufferBytes ?? 8 * 1024 * 1024,
      flushIntervalMs: options.flushIntervalMs ?? 1000,
    };
    this.#diag = options.diagnostics;
  }

  get path(): string {
    return join(this.#opts.dir, SPANS_FILE);
  }

  onStart(_span: Span, _parentContext: Context): void {}

  onEnd(span: ReadableSpan): void {
    if (this.#closed) return;
    let line: string;
    try {
      line = JSON.stringify(toJson(span)) + '\n';
    } catch (err) {
      this.#diag.error('spans.serialize', err);
      return;
    }
    this.#lines.push(line);
    this.#bytes += line.length;
    while (this.#bytes > this.#opts.maxBufferBytes && this.#lines.length > 1) {
      const old = this.#lines.shift();
      this.#bytes -= old?.length ?? 0;
      this.#dropped++;
      this.#diag.count('spans.dropped');
    }
    if (this.#timer === undefined) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        void this.forceFlush();
      }, this.#opts.flushIntervalMs);
      this.#timer.unref();
    }
  }

  forceFlush(): Promise<void> {
    const lines = this.#take();
    if (lines === '') return this.#writing;
    this.#writing = this.#writing.then(() => this.#append(lines));
    return this.#writing;
  }

  /** Write what is buffered now, synchronously; for `process.on('exit')`. */
  flushSync(): void {
    const lines = this.#take();
    if (lines === '') return;
    try {
      mkdirSync(this.#opts.dir, { recursive: true });
      this.#rotateSync(lines.length);
      this.#account(appendWholeLinesSync(this.path, lines));
    } catch (err) {
      this.#diag.error('spans.write', err);
    }
  }

  async shutdown(): Promise<void> {
    if (this.#closed) return this.#writing;
    await this.forceFlush();
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
  }

  stats(): { written: number; dropped: number; bufferedBytes: number } {
    return { written: this.#written, dropped: this.#dropped, bufferedBytes: this.#bytes };
  }

  #take(): string {
    if (this.#lines.length === 0) return '';
    const s = this.#lines.join('');
    this.#lines = [];
    this.#bytes = 0;
    return s;
  }

  async #append(lines: string): Promise<void> {
    try {
      if (!this.#dirReady) {
        await mkdir(this.#opts.dir, { recursive: true });
        this.#dirReady = true;
      }
      const size = await stat(this.path).then((s) => s.size, () => 0);
      if (size > 0 && size + lines.length > this.#opts.maxFileBytes) {
        await rename(this.path, join(this.#opts.dir, 'spans.1.jsonl'));
      }
      this.#account(await appendWholeLines(this.path, lines));
    } catch (err) {
      this.#diag.error('spans.write', err);
    }
  }

  /** Count what one append wrote; lines that did not fit (full disk) are dropped, never half-written. */
  #account(r: LinesWritten): void {
    this.#written += r.lines;
    if (r.dropped > 0) {
      this.#dropped += r.dropped;
      this.#diag.count('spans.dropped', r.dropped);
      this.#diag.error('spans.write', r.error);
    }
  }

  #rotateSync(incoming: number): void {
    let size = 0;
    try {
      size = statSync(this.path).size;
    } catch {
      return;
    }
    if (size > 0 && size + incoming > this.#opts.maxFileBytes) {
      renameSync(this.path, join(this.#opts.dir, 'spans.1.jsonl'));
    }
  }
}

/** The JSON shape of a span in `spans.jsonl` (README documents it). */
export function toJson(span: ReadableSpan): Record<string, unknown> {
  const sc = span.spanContext();
  return {
    traceId: sc.traceId,
    spanId: sc.spanId,
    parentSpanId: span.parentSpanContext?.spanId,
    name: span.name,
    kind: span.kind,
    startTimeUnixNano: hrTimeToNanos(span.startTime).toString(),
    endTimeUnixNano: hrTimeToNanos(span.endTime).toString(),
    attributes: { ...span.attributes },
    status: { code: span.status.code, ...(span.status.message === undefined ? {} : { message: span.status.message }) },
  };
}
