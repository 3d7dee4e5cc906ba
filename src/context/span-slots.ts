import { hexInto } from '../core/hex.js';
import type { SampleContext, Slotted } from './sample-context.js';

/**
 * Span identities the sampler's holders refer to by a small integer.
 *
 * In AsyncContextFrame mode @datadog/pprof makes one native holder per span
 * entry and keeps a strong V8 global handle on the value it labels samples
 * with until the holder's weak callback runs, i.e. through the scavenge that
 * finds the holder dead. With a SampleContext as that value, every span's
 * SampleContext and its id strings survived one young-generation collection:
 * the largest part of what spanfuse added to each scavenge's survivors. A Smi
 * is not a heap object, so nothing survives through the handle.
 *
 * The integer is `gen << SLOT_BITS | slot`. While a span is live its slot
 * points at its SampleContext (which the span keeps alive anyway); when it
 * ends, the ids, flags and name are copied into typed arrays and the object
 * reference is dropped. A slot is reused once every sample that may name it
 * has been resolved: after the window the span ended in is labelled if the
 * span ended at least {@link DEFAULT_GRACE_MS} before that window closed,
 * else after the next window is labelled too (continuations that run
 * shortly after a span ended still resolve). A sample taken in the span's
 * context later than that finds another generation in the slot and
 * resolves to no span (counted stale): never to the wrong one. Ended slots
 * are reused oldest first, before the table grows. The table holds about
 * one window of ended spans rather than two.
 * Spans whose ids are not plain hex keep their object in the slot. When the
 * table is full, callers fall back to the object value.
 */

/** Bits of the slot index in an id; the rest (up to Smi range) is the generation. */
const SLOT_BITS = 18;
const SLOT_MASK = (1 << SLOT_BITS) - 1;
export const MAX_SLOTS = 1 << SLOT_BITS;
const GEN_MASK = (1 << (30 - SLOT_BITS)) - 1;
const INITIAL_SLOTS = 1 << 12;
/** Bytes of ids per slot: trace id (16), span id (8), local root (8). */
const ID_BYTES = 32;
/** 32-bit words of the rest per slot: flags with the has-root bit, name index. */
const META = 2;
const NO_NAME = 0xffffffff;
/** Distinct span names kept as indices; beyond, a slot keeps its own string. */
const MAX_NAMES = 1 << 14;
/**
 * How long after its end a span's continuations still resolve for certain
 * (ms): a span that ended this long before its window closed frees its slot
 * when that window is labelled.
 */
export const DEFAULT_GRACE_MS = 1000;
/** Close times kept for windows not labelled yet (builds pending at once are a few). */
const CLOSES = 16;

/** A SampleContext's fields, writable: what `resolveInto` fills. */
export interface DecodedSpan {
  traceId: string;
  spanId: string;
  traceFlags: number;
  localRootSpanId: string | undefined;
  name: string | undefined;
}

export interface SpanSlotsOptions {
  /** See {@link DEFAULT_GRACE_MS}. */
  readonly graceMs?: number;
  /** Clock in ms (tests); `performance.now` by default. */
  readonly now?: () => number;
}

/** A slot's state; ids carry a generation >= 1, so a never-used slot (gen 0) matches none. */
const enum State {
  Live = 1,
  Ended = 2,
}

export interface SpanSlotStats {
  /** Slots allocated (the table grows on demand up to {@link MAX_SLOTS}). */
  readonly capacity: number;
  readonly live: number;
  /** Ended spans whose slot waits for their windows to be labelled. */
  readonly ended: number;
  /** Samples whose slot had been reused before their window was labelled. */
  readonly stale: number;
  /** Spans that got the object value because the table was full. */
  readonly full: number;
}

export class SpanSlots {
  readonly #graceMs: number;
  readonly #now: () => number;
  #capacity = 0;
  #gen = new Uint16Array(0);
  #state = new Uint8Array(0);
  /** The window (count of windows opened) open when the span ended. */
  #endWindow = new Uint32Array(0);
  /** When the span ended (ms, the clock's). */
  #endMs = new Float64Array(0);
  /** Close time of window `n` at `n % CLOSES`, and which window it is. */
  readonly #closedAt = new Float64Array(CLOSES);
  readonly #closedWindow = new Uint32Array(CLOSES).fill(0xffffffff);
  #ids = Buffer.alloc(0);
  #meta = new Uint32Array(0);
  #objects: (SampleContext | undefined)[] = [];
  #overflowNames = new Map<number, string>();
  /** Slots from here to the capacity were never used. */
  #fresh = 0;
  /**
   * Ended slots in the order they ended (their end windows never decrease): a
   * ring as large as the table, so nothing here allocates per span.
   */
  #ended = new Int32Array(0);
  #endedHead = 0;
  #endedCount = 0;
  #names: string[] = [];
  #nameIndex = new Map<string, number>();
  /** Windows opened by the sampler of this isolate. */
  #opened = 0;
  /** Windows whose samples have been labelled (or given up). */
  #labelled = 0;
  #decoded = new Map<number, SampleContext>();
  #live = 0;
  #stale = 0;
  #full = 0;

  constructor(options: SpanSlotsOptions = {}) {
    this.#graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
    this.#now = options.now ?? (() => performance.now());
  }

  /** The id for `sample`, made on first use; undefined when the table is full. */
  idOf(sample: SampleContext): number | undefined {
    const s = sample as Slotted;
    const known = s.slotId;
    if (known !== undefined) {
      // Its slot may have gone to another span since it ended: then the object.
      const slot = known & SLOT_MASK;
      return this.#gen[slot] === known >>> SLOT_BITS ? known : undefined;
    }
    let slot = this.#reusable();
    if (slot === undefined) {
      if (this.#fresh === this.#capacity) {
        if (this.#capacity >= MAX_SLOTS) {
          this.#full++;
          return undefined;
        }
        this.#grow();
      }
      slot = this.#fresh++;
    }
    const gen = (this.#gen[slot]! + 1) & GEN_MASK || 1;
    this.#gen[slot] = gen;
    this.#state[slot] = State.Live;
    this.#objects[slot] = sample;
    this.#live++;
    const id = (gen << SLOT_BITS) | slot;
    s.slotId = id;
    return id;
  }

  /**
   * The span of `sample` ended: keep what its labels need in the typed
   * arrays and let the object go. No-op for samples that never got an id.
   */
  release(sample: SampleContext): void {
    const id = (sample as Slotted).slotId;
    if (id === undefined) return;
    const slot = id & SLOT_MASK;
    if (this.#gen[slot] !== id >>> SLOT_BITS || this.#state[slot] !== State.Live) return;
    const at = slot * ID_BYTES;
    const ids = this.#ids;
    const root = sample.localRootSpanId;
    if (sample.traceId.length === 32 && sample.spanId.length === 16 && (root === undefined || root.length === 16) && idsInto(ids, at, sample.traceId, sample.spanId, root)) {
      const m = slot * META;
      this.#meta[m] = (sample.traceFlags & 0xff) | (root === undefined ? 0 : 0x100);
      this.#meta[m + 1] = this.#nameOf(slot, sample.name);
      this.#objects[slot] = undefined;
    }
    this.#state[slot] = State.Ended;
    this.#endWindow[slot] = this.#opened;
    this.#endMs[slot] = this.#now();
    this.#ended[(this.#endedHead + this.#endedCount++) & (this.#capacity - 1)] = slot;
    this.#live--;
  }

  /**
   * The SampleContext a sample's id stands for; undefined when its slot was
   * reused (counted as stale). Objects made from the typed arrays are cached
   * until the next window is labelled, so a span's samples share one.
   */
  resolve(id: number): SampleContext | undefined {
    const slot = id & SLOT_MASK;
    // Beyond the capacity the typed array reads undefined: stale as well.
    if (this.#gen[slot] !== id >>> SLOT_BITS) {
      this.#stale++;
      return undefined;
    }
    const obj = this.#objects[slot];
    if (obj !== undefined) return obj;
    let made = this.#decoded.get(id);
    if (made === undefined) {
      made = this.#decode(slot, { traceId: '', spanId: '', traceFlags: 0, localRootSpanId: undefined, name: undefined });
      this.#decoded.set(id, made);
    }
    return made;
  }

  /**
   * Like `resolve`, for the window build, which keeps each span's labels
   * itself: an ended span's ids are written into `into` (the caller's one
   * scratch object, overwritten by the next call) instead of a new object
   * kept until the window is labelled. The live span's SampleContext while
   * it holds its slot; undefined when the slot was reused (counted stale).
   * The objects per span, cached for the whole build, and their Map were
   * ~2.6 of the 21.5 MB the build of a 60,000-sample window left to the
   * scavenger (`bench/gc/survivors.ts`).
   */
  resolveInto(id: number, into: DecodedSpan): SampleContext | undefined {
    const slot = id & SLOT_MASK;
    if (this.#gen[slot] !== id >>> SLOT_BITS) {
      this.#stale++;
      return undefined;
    }
    return this.#objects[slot] ?? this.#decode(slot, into);
  }

  /**
   * An ended slot's ids as hex and its name, into `into`. A local root equal
   * to the span itself (a local root span's own) is the span id's string.
   */
  #decode(slot: number, into: DecodedSpan): DecodedSpan {
    const at = slot * ID_BYTES;
    const ids = this.#ids;
    const flags = this.#meta[slot * META]!;
    const nameIdx = this.#meta[slot * META + 1]!;
    const spanId = ids.toString('hex', at + 16, at + 24);
    into.traceId = ids.toString('hex', at, at + 16);
    into.spanId = spanId;
    into.traceFlags = flags & 0xff;
    if ((flags & 0x100) === 0) into.localRootSpanId = undefined;
    else if (ids.readUInt32LE(at + 24) === ids.readUInt32LE(at + 16) && ids.readUInt32LE(at + 28) === ids.readUInt32LE(at + 20)) into.localRootSpanId = spanId;
    else into.localRootSpanId = ids.toString('hex', at + 24, at + 32);
    into.name = nameIdx === NO_NAME ? this.#overflowNames.get(slot) : this.#names[nameIdx];
    return into;
  }

  /** The sampler opened a window (windows are labelled in the order they open); the one before it closed. */
  opened(): void {
    const closing = this.#opened;
    if (closing > 0) {
      this.#closedAt[closing % CLOSES] = this.#now();
      this.#closedWindow[closing % CLOSES] = closing;
    }
    this.#opened++;
  }

  /**
   * One more window's samples have been labelled (or will never be): slots
   * of spans that ended two windows ago may be reused (lazily, by `idOf`:
   * nothing here is proportional to the number of spans).
   */
  labelled(): void {
    this.#labelled++;
    this.#decoded.clear();
  }

  /** The oldest ended slot if no sample can still ask for it (the caller bumps its generation). */
  #reusable(): number | undefined {
    if (this.#endedCount === 0) return undefined;
    const slot = this.#ended[this.#endedHead]!;
    // Samples of a span that ended in window k sit in k and (continuations)
    // k + 1; in k alone if it ended a grace period before k closed.
    const k = this.#endWindow[slot]!;
    if (k + 1 > this.#labelled) {
      if (k > this.#labelled || this.#closedWindow[k % CLOSES] !== k) return undefined;
      if (this.#endMs[slot]! + this.#graceMs > this.#closedAt[k % CLOSES]!) return undefined;
    }
    this.#endedHead = (this.#endedHead + 1) & (this.#capacity - 1);
    this.#endedCount--;
    this.#objects[slot] = undefined;
    if (this.#overflowNames.size > 0) this.#overflowNames.delete(slot);
    return slot;
  }

  stats(): SpanSlotStats {
    return { capacity: this.#capacity, live: this.#live, ended: this.#endedCount, stale: this.#stale, full: this.#full };
  }

  #nameOf(slot: number, name: string | undefined): number {
    if (name === undefined) {
      this.#overflowNames.delete(slot);
      return NO_NAME;
    }
    let i = this.#nameIndex.get(name);
    if (i === undefined) {
      if (this.#names.length >= MAX_NAMES) {
        this.#overflowNames.set(slot, name);
        return NO_NAME;
      }
      i = this.#names.length;
      this.#names.push(name);
      this.#nameIndex.set(name, i);
    }
    return i;
  }

  #grow(): void {
    const from = this.#capacity;
    const to = from === 0 ? INITIAL_SLOTS : Math.min(MAX_SLOTS, from * 2);
    const gen = new Uint16Array(to);
    gen.set(this.#gen);
    const state = new Uint8Array(to);
    state.set(this.#state);
    const endWindow = new Uint32Array(to);
    endWindow.set(this.#endWindow);
    const endMs = new Float64Array(to);
    endMs.set(this.#endMs);
    const ids = Buffer.alloc(to * ID_BYTES);
    this.#ids.copy(ids);
    const meta = new Uint32Array(to * META);
    meta.set(this.#meta);
    this.#gen = gen;
    this.#state = state;
    this.#endWindow = endWindow;
    this.#endMs = endMs;
    this.#ids = ids;
    this.#meta = meta;
    this.#objects.length = to;
    // The ring, in order from its head.
    const ended = new Int32Array(to);
    for (let i = 0; i < this.#endedCount; i++) ended[i] = this.#ended[(this.#endedHead + i) & (from - 1)]!;
    this.#ended = ended;
    this.#endedHead = 0;
    this.#capacity = to;
  }
}

/**
 * Write the trace id, span id and local root (lower-case hex, as W3C Trace
 * Context has them; 32, 16 and 16 digits) as 32 bytes into `out` at `at`;
 * false if they are not that (the caller then keeps the strings).
 */
function idsInto(out: Buffer, at: number, traceId: string, spanId: string, root: string | undefined): boolean {
  if (!hexInto(out, traceId, at, true) || !hexInto(out, spanId, at + 16, true)) return false;
  if (root === undefined) {
    out.fill(0, at + 24, at + ID_BYTES);
    return true;
  }
  return hexInto(out, root, at + 24, true);
}

/** The isolate's table (each worker has its own module instance, hence its own). */
export const spanSlots = new SpanSlots();
