import { mkdir, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Diagnostics } from '../core/diagnostics.js';
import { ATTR_TAIL } from '../exemplars/attributes.js';
import { hrTimeToNanos, hrTimeToNanoString } from './time.js';
import { appendWholeLines, appendWholeLinesSync, countLines, roomFor, roomForSync } from './whole-lines.js';
import type { LinesWritten } from './whole-lines.js';
import { fs } from '../core/builtins.js';
import { hexTail32 } from '../core/hex.js';

const { mkdirSync, renameSync, statSync } = fs;

export interface JsonlSpanProcessorOptions {
  readonly dir: string;
  /** `spans.jsonl` rotates to `spans.1.jsonl` beyond this size. */
  readonly maxFileBytes: number;
  /** Spans buffered in memory before the oldest are dropped (bytes). */
  readonly maxBufferBytes?: number;
  readonly flushIntervalMs?: number;
  /**
   * Keep every tail span (`profiler.tail`) and the spans of one trace in
   * `oneIn` of the others, chosen by trace id; their lines carry
   * `"adjustedCount": oneIn`. Default 1: every span.
   */
  readonly oneIn?: number;
  readonly diagnostics: Diagnostics;
}

export const SPANS_FILE = 'spans.jsonl';
/** The one backup `spans.jsonl` rotates to (the older one is replaced). */
export const SPANS_BACKUP_FILE = 'spans.1.jsonl';

/**
 * Whether the trace of `traceId` is among the one in `oneIn` kept: its last 8
 * hex digits (random in W3C trace ids) taken modulo `oneIn`, so every span
 * of a kept trace is kept, whichever process or thread writes it.
 */
export function keepsTrace(traceId: string, oneIn: number): boolean {
  if (oneIn <= 1) return true;
  const low = hexTail32(traceId);
  return Number.isFinite(low) && low % oneIn === 0;
}

/**
 * Spans whose lines are built together, at most. Ended spans are kept by
 * reference only until the end of the event-loop turn they ended in (or
 * until this many are waiting, whichever comes first): one that waited
 * across a young-generation collection would be copied, with its
 * attributes, and one that waited across two promoted. Their lines are then
 * encoded off the JS heap at once (see #serializePending).
 */
const BATCH_SPANS = 32;
/**
 * Buffered bytes that trigger a write before the flush interval: bounds what
 * is held between writes (lines die young); no CPU difference against 1 MiB
 * was measurable on the shared machine.
 */
const EARLY_FLUSH_BYTES = 256 * 1024;

/**
 * The embedded span output: one JSON object per ended span in
 * `<dir>/spans.jsonl`. `onEnd` only keeps a reference; lines are built for
 * the spans that ended in one event-loop turn together (at its end, or
 * every {@link BATCH_SPANS} spans), buffered and appended once a second (timer
 * unref'd), and written synchronously by `flushSync()` on process exit, so no
 * span is lost when the app calls `process.exit()`. Memory is bounded: beyond
 * `maxBufferBytes` the oldest batches of lines are dropped and counted.
 */
export class JsonlSpanProcessor implements SpanProcessor {
  readonly #opts: Required<Omit<JsonlSpanProcessorOptions, 'diagnostics' | 'oneIn'>>;
  readonly #oneIn: number;
  readonly #diag: Diagnostics;
  /** Ended spans whose lines are not built yet (at most BATCH_SPANS). */
  #pending: ReadableSpan[] = [];
  /** Built lines, UTF-8, a batch per chunk, oldest first. */
  #chunks: Buffer[] = [];
  #chunkLines: number[] = [];
  #bytes = 0;
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> = Promise.resolve();
  #dirReady = false;
  #early = false;
  /** A serialization of the pending spans is queued for the end of this turn. */
  #soon = false;
  readonly #serializeSoon = (): void => {
    this.#soon = false;
    this.#serializePending();
  };
  /** Writes handed to the chain and not finished yet. */
  #inFlight = 0;
  #closed = false;
  #written = 0;
  #dropped = 0;
  /** Spans left out by the one-in-N choice (not an error: adjustedCount stands for them). */
  #sampledOut = 0;

  constructor(options: JsonlSpanProcessorOptions) {
    this.#opts = {
      dir: options.dir,
      maxFileBytes: options.maxFileBytes,
      maxBufferBytes: options.maxBufferBytes ?? 8 * 1024 * 1024,
      flushIntervalMs: options.flushIntervalMs ?? 1000,
    };
    this.#oneIn = Math.max(1, Math.floor(options.oneIn ?? 1));
    this.#diag = options.diagnostics;
  }

  get path(): string {
    return join(this.#opts.dir, SPANS_FILE);
  }

  onStart(_span: Span, _parentContext: Context): void {}

  onEnd(span: ReadableSpan): void {
    if (this.#closed) return;
    if (this.#adjustedCount(span) > 1 && !keepsTrace(span.spanContext().traceId, this.#oneIn)) {
      this.#sampledOut++;
      return;
    }
    // Only a reference here: lines are built a batch at a time, off the
    // span's own path (an ended span no longer changes).
    this.#pending.push(span);
    if (this.#pending.length >= BATCH_SPANS) this.#serializePending();
    else if (!this.#soon) {
      // At the end of this turn: a span kept across a turn would be copied
      // by the young-generation collections that the app's next callbacks
      // trigger (bench/gc/scavenges.ts).
      this.#soon = true;
      setImmediate(this.#serializeSoon).unref();
    }
    if (this.#timer === undefined) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        void this.forceFlush();
      }, this.#opts.flushIntervalMs);
      this.#timer.unref();
    }
  }

  /** Spans a written line of `span` stands for: 1 for a tail span or when every span is written. */
  #adjustedCount(span: ReadableSpan): number {
    return this.#oneIn > 1 && span.attributes[ATTR_TAIL] !== true ? this.#oneIn : 1;
  }

  /** Turn the pending spans into one chunk of lines; drop the oldest chunks beyond the byte bound. */
  #serializePending(): void {
    const spans = this.#pending;
    if (spans.length === 0) return;
    this.#pending = [];
    let text = '';
    let lines = 0;
    for (const span of spans) {
      try {
        text += toLine(span, this.#adjustedCount(span));
        lines++;
      } catch (err) {
        this.#diag.error('spans.serialize', err);
      }
    }
    if (lines === 0) return;
    // Encoded now, the lines wait for the write outside the JS heap: held as
    // strings (or the spans as objects) they would be copied by every
    // young-generation collection until the write, then promoted.
    const chunk = Buffer.from(text, 'utf8');
    this.#chunks.push(chunk);
    this.#chunkLines.push(lines);
    this.#bytes += chunk.length;
    while (this.#bytes > this.#opts.maxBufferBytes && this.#chunks.length > 1) {
      this.#bytes -= this.#chunks.shift()?.length ?? 0;
      const n = this.#chunkLines.shift() ?? 0;
      this.#dropped += n;
      this.#diag.count('spans.dropped', n);
    }
    // Many spans per second: write now rather than hold a second's worth.
    // (Not while a write is under way: then the byte bound above holds.)
    if (this.#bytes >= EARLY_FLUSH_BYTES && !this.#early && this.#inFlight === 0) {
      this.#early = true;
      setImmediate(() => {
        this.#early = false;
        void this.forceFlush();
      }).unref();
    }
  }

  forceFlush(): Promise<void> {
    const lines = this.#take();
    if (lines === undefined) return this.#writing;
    this.#inFlight++;
    this.#writing = this.#writing.then(() => this.#append(lines)).finally(() => {
      this.#inFlight--;
    });
    return this.#writing;
  }

  /** Write what is buffered now, synchronously; for `process.on('exit')`. */
  flushSync(): void {
    const lines = this.#take();
    if (lines === undefined) return;
    try {
      mkdirSync(this.#opts.dir, { recursive: true });
      this.#rotateSync(lines.length);
      if (!roomForSync(this.#opts.dir, lines.length)) return this.#giveWay(lines);
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

  stats(): { written: number; dropped: number; sampledOut: number; bufferedBytes: number } {
    return { written: this.#written, dropped: this.#dropped, sampledOut: this.#sampledOut, bufferedBytes: this.#bytes };
  }

  #take(): Buffer | undefined {
    this.#serializePending();
    if (this.#chunks.length === 0) return undefined;
    const b = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks, this.#bytes);
    this.#chunks = [];
    this.#chunkLines = [];
    this.#bytes = 0;
    return b;
  }

  async #append(lines: Buffer): Promise<void> {
    try {
      if (!this.#dirReady) {
        await mkdir(this.#opts.dir, { recursive: true });
        this.#dirReady = true;
      }
      const size = await stat(this.path).then((s) => s.size, () => 0);
      if (size > 0 && size + lines.length > this.#opts.maxFileBytes) {
        await rename(this.path, join(this.#opts.dir, SPANS_BACKUP_FILE));
      }
      if (!(await roomFor(this.#opts.dir, lines.length))) return this.#giveWay(lines);
      this.#account(await appendWholeLines(this.path, lines));
    } catch (err) {
      this.#diag.error('spans.write', err);
    }
  }

  /** The disk is nearly full: these lines are dropped (counted) so profile windows keep room. */
  #giveWay(lines: Buffer): void {
    const n = countLines(lines, lines.length);
    this.#dropped += n;
    this.#diag.count('spans.dropped', n);
    this.#diag.warnOnce(
      'spans.disk',
      `spanfuse: the disk of ${this.#opts.dir} is nearly full; span lines are dropped (stats().spans.dropped) to keep room for profile windows`,
    );
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
      renameSync(this.path, join(this.#opts.dir, SPANS_BACKUP_FILE));
    }
  }
}


/**
 * One line of `spans.jsonl`: the same text as `JSON.stringify(toJson(span, adjustedCount))`
 * plus a newline, without the bigints and the attribute copy. (One native
 * stringify of a small object beats string concatenation here: the
 * concatenated pieces would have to be flattened again when lines are
 * joined for the write.) `adjustedCount` > 1: the line stands for that many
 * spans (one-in-N choice).
 */
export function toLine(span: ReadableSpan, adjustedCount = 1): string {
  const sc = span.spanContext();
  const st = span.status;
  return (
    JSON.stringify({
      traceId: sc.traceId,
      spanId: sc.spanId,
      parentSpanId: span.parentSpanContext?.spanId,
      name: span.name,
      kind: span.kind,
      startTimeUnixNano: hrTimeToNanoString(span.startTime),
      endTimeUnixNano: hrTimeToNanoString(span.endTime),
      attributes: span.attributes,
      status: st.message === undefined ? { code: st.code } : { code: st.code, message: st.message },
      adjustedCount: adjustedCount === 1 ? undefined : adjustedCount,
    }) + '\n'
  );
}

/** The JSON shape of a span in `spans.jsonl` (README documents it). */
export function toJson(span: ReadableSpan, adjustedCount = 1): Record<string, unknown> {
  const sc = span.spanContext();
  const out: Record<string, unknown> = {
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
  if (adjustedCount !== 1) out.adjustedCount = adjustedCount;
  return out;
}
