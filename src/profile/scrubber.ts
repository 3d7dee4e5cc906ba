import type { Profile } from '../core/pprof.js';
import { Function as PFunction, Label, LazyStringTable, Mapping, Profile as PprofProfile, sampleOf, sampleTimes, setSampleTimes } from '../core/pprof.js';
import type { Sample, ValueType } from '../core/pprof.js';
import type { AttributeValue, TailSpanRef, WindowProfile } from '../core/window.js';
import { runSliced, runSync, staged, stepEvery, STEP_ENTRIES } from '../core/slices.js';
import type { Steps } from '../core/slices.js';
import type { ScrubConfig } from './scrub-config.js';
import { PathScrubber } from './scrub-paths.js';
import {
  ASSIGNMENT,
  BASE64_CANDIDATE,
  DENY_KEY_PARTS,
  ID_LABEL_KEYS,
  looksRandom,
  normalizeKey,
  REDACTED,
  redactCards,
  SECRET_PATTERNS,
} from './scrub-rules.js';

const ID_SHAPES: Readonly<Record<string, RegExp>> = {
  trace_id: /^[0-9a-f]{32}$/,
  span_id: /^[0-9a-f]{16}$/,
  local_root_span_id: /^[0-9a-f]{16}$/,
  trace_flags: /^[0-9a-f]{2}$/,
};

// `?k=v...` query strings (in URLs and in bare request paths).
const QUERY = /\?[^\s#"'<>]*=[^\s#"'<>]*/g;

/**
 * The one policy stage before export. Produces a scrubbed copy of a window:
 * every string of its pprof profiles (labels, function names, file names,
 * mappings, comments), its profile attributes and tail-span operations.
 * Counts what it redacted, by reason.
 */
export class Scrubber {
  readonly #denyParts: readonly string[];
  readonly #allow: ReadonlySet<string>;
  readonly #rules: readonly RegExp[];
  readonly #paths: PathScrubber;
  readonly #counts = new Map<string, number>();
  /**
   * Text already scrubbed, with the redactions it counted: function names,
   * file names and label values repeat in every window, and each miss costs
   * a dozen regular expressions. Emptied when it reaches {@link MEMO_MAX}.
   */
  readonly #memo = new Map<string, Memo>();
  #windows = 0;

  constructor(config: ScrubConfig) {
    this.#denyParts = [...DENY_KEY_PARTS, ...config.denyKeys.map(normalizeKey).filter((k) => k !== '')];
    this.#allow = new Set(config.allowKeys.map(normalizeKey));
    this.#rules = config.rules.map((r) => (r.global ? r : new RegExp(r.source, `${r.flags}g`)));
    this.#paths = new PathScrubber(config.appRoot, config.userNames);
  }

  scrub(window: WindowProfile): WindowProfile {
    return runSync(this.#scrubSteps(window, Infinity));
  }

  /**
   * Same result as `scrub`, cut into steps of `sliceSamples` samples run a
   * couple of milliseconds at a time with an event-loop turn between them
   * (`runSliced`), so a large window never blocks the host for long.
   */
  scrubAsync(window: WindowProfile, sliceSamples = STEP_ENTRIES): Promise<WindowProfile> {
    return runSliced(staged('scrub', this.#scrubSteps(window, sliceSamples)));
  }

  *#scrubSteps(window: WindowProfile, slice: number): Steps<WindowProfile> {
    this.#windows++;
    const out: WindowProfile = {
      ...window,
      wall: yield* this.#profileSteps(window.wall, slice),
      attributes: this.#scrubAttributes(window.attributes),
      tailSpans: window.tailSpans.map((t) => this.#scrubTail(t)),
    };
    if (window.heap) out.heap = yield* this.#profileSteps(window.heap, slice);
    if (window.offCpu) out.offCpu = yield* this.#profileSteps(window.offCpu, slice);
    return out;
  }

  stats(): Readonly<Record<string, number>> {
    let total = 0;
    for (const n of this.#counts.values()) total += n;
    const out: Record<string, number> = { windows: this.#windows, redactions: total };
    for (const [k, n] of this.#counts) out[`redactions.${k}`] = n;
    return out;
  }

  /** Entries in the scrubbed-text memo, for inspection. */
  get memoSize(): number {
    return this.#memo.size;
  }

  /** A key whose value is always redacted (and not allow-listed). */
  isDeniedKey(key: string): boolean {
    const k = normalizeKey(key);
    if (this.#allow.has(k)) return false;
    return this.#denyParts.some((p) => k.includes(p));
  }

  isAllowedKey(key: string): boolean {
    return this.#allow.has(normalizeKey(key));
  }

  /**
   * Scrub free text: URL queries, secrets, card numbers, user rules, paths.
   * The same text always gives the same result and counts the same
   * redactions, so results are kept (see {@link Scrubber.#memo}), unless
   * `remember` is false: text made once per window (comments, window
   * attributes, with counts and times in them) never comes back, and would
   * only fill the memo.
   */
  scrubText(text: string, remember = true): string {
    if (text === '') return text;
    const hit = this.#memo.get(text);
    if (hit !== undefined) {
      for (const k of hit.kinds) this.#count(k);
      return hit.out;
    }
    const kinds: string[] = [];
    const out = this.#scrubTextOnce(text, kinds);
    if (remember && text.length <= MEMO_TEXT_MAX) {
      if (this.#memo.size >= MEMO_MAX) this.#memo.clear();
      this.#memo.set(text, { out, kinds });
    }
    return out;
  }

  /** One scrub of `text`; each redaction is counted and added to `kinds`. */
  #scrubTextOnce(text: string, kinds: string[]): string {
    const redact = (kind: string): void => {
      kinds.push(kind);
      this.#count(kind);
    };
    let s = text;
    const before = s;
    s = s.replace(QUERY, () => {
      redact('query');
      return '';
    });
    s = s.replace(ASSIGNMENT, (_m, key: string) => {
      redact('assignment');
      return `${key}${REDACTED}`;
    });
    for (const p of SECRET_PATTERNS) {
      p.re.lastIndex = 0;
      if (!p.re.test(s)) continue;
      s = s.replace(p.re, () => {
        redact(p.name);
        return REDACTED;
      });
    }
    s = s.replace(BASE64_CANDIDATE, (m) => {
      if (!looksRandom(m)) return m;
      redact('base64');
      return REDACTED;
    });
    s = redactCards(s, () => redact('card'));
    for (const r of this.#rules) {
      r.lastIndex = 0;
      s = s.replace(r, () => {
        redact('rule');
        return REDACTED;
      });
    }
    const pathed = this.#paths.scrub(s);
    if (pathed !== s) redact('path');
    return pathed === before ? before : pathed;
  }

  scrubProfile(p: Profile): Profile {
    return runSync(this.#profileSteps(p, Infinity));
  }

  /**
   * The scrubbed copy shares what scrubbing leaves as it was: the string
   * table is copied (an array of references) and keeps its indices, a label
   * whose key and value keep their strings is the same Label object, a
   * sample whose labels are all the same is the same Sample, and so for
   * functions, mappings and value types. Text that scrubbing changes is
   * appended to the copy; then every string of the copy that no field refers
   * to as it is (unreferenced, or referenced only in scrubbed form) is
   * blanked, so what a secret was replaced in does not carry it on in the
   * table. A window with nothing to scrub thus costs one array of strings
   * and one of samples, not a second profile (the copy used to be about as
   * large as the window, and alive at the same time).
   */
  *#profileSteps(p: Profile, slice: number): Steps<Profile> {
    const old = p.stringTable.strings;
    const strings = old.length > 0 ? old.slice() : [''];
    // Per string of the original table: 1 = referenced as it is.
    const kept = new Uint8Array(old.length);
    kept[0] = 1;
    const appended = new Map<string, number>();
    const put = (s: string): number => {
      if (s === '') return 0;
      let i = appended.get(s);
      if (i === undefined) {
        i = strings.push(s) - 1;
        appended.set(s, i);
      }
      return i;
    };
    const memo = new Int32Array(old.length).fill(-1);
    const text = (i: number | bigint, remember = true): number => {
      const n = Number(i);
      if (n === 0) return 0;
      const m = memo[n];
      if (m !== undefined && m !== -1) return m;
      const before = old[n] ?? '';
      const after = this.scrubText(before, remember);
      let v: number;
      if (after === before) {
        kept[n] = 1;
        v = n;
      } else v = put(after);
      memo[n] = v;
      return v;
    };
    const raw = (i: number | bigint): number => {
      const n = Number(i);
      kept[n] = 1;
      return n;
    };

    // Per label key: how its values are treated.
    const keyMode = new Map<number, 'deny' | 'allow' | 'id' | 'text'>();
    const modeOf = (k: number): 'deny' | 'allow' | 'id' | 'text' => {
      let m = keyMode.get(k);
      if (m === undefined) {
        const key = old[k] ?? '';
        m = ID_LABEL_KEYS.has(key) ? 'id' : this.isAllowedKey(key) ? 'allow' : this.isDeniedKey(key) ? 'deny' : 'text';
        keyMode.set(k, m);
      }
      return m;
    };
    // Per id key, per string index: 1 = has the shape the key requires, 2 = not.
    const idShapes = new Map<number, Int8Array>();
    let redacted = -1;
    const stringValue = (k: number, v: number, mode: 'deny' | 'allow' | 'id' | 'text'): number => {
      if (mode === 'deny') return redacted >= 0 ? redacted : (redacted = put(REDACTED));
      if (mode === 'allow') return raw(v);
      if (mode === 'text') return text(v);
      let shapes = idShapes.get(k);
      if (shapes === undefined) {
        shapes = new Int8Array(old.length);
        idShapes.set(k, shapes);
      }
      let shape = shapes[v];
      if (shape === 0) {
        shape = ID_SHAPES[old[k] ?? '']?.test(old[v] ?? '') === true ? 1 : 2;
        shapes[v] = shape;
      }
      return shape === 1 ? raw(v) : text(v);
    };
    // Labels whose value changed: one new Label per distinct {key, value}.
    const newLabels = new Map<number, Map<number, Label>>();
    const changedLabel = (k: number, str: number): Label => {
      let byValue = newLabels.get(k);
      if (byValue === undefined) {
        byValue = new Map();
        newLabels.set(k, byValue);
      }
      let label = byValue.get(str);
      if (label === undefined) {
        label = new Label({ key: k, str });
        byValue.set(str, label);
      }
      return label;
    };

    const sample: Sample[] = [];
    const due = stepEvery(slice);
    // Indexed loops: once per window, interpreted, where for-of allocates an
    // iterator result per element.
    const samples = p.sample;
    for (let i = 0; i < samples.length; i++) {
      if (due()) yield;
      const s = samples[i] as Sample;
      let label: Label[] | undefined;
      const labels = s.label;
      for (let j = 0; j < labels.length; j++) {
        const l = labels[j] as Label;
        const k = raw(l.key);
        const mode = modeOf(k);
        const v = Number(l.str);
        let out: Label | undefined = l;
        if (v !== 0) {
          if (mode === 'deny') this.#count('key');
          const str = stringValue(k, v, mode);
          if (str !== v) out = changedLabel(k, str);
        } else if (mode === 'deny') {
          // A number under a secret key: leave the label out.
          this.#count('key');
          out = undefined;
        } else {
          const unit = text(l.numUnit);
          if (unit !== Number(l.numUnit)) out = new Label({ key: k, num: l.num, numUnit: unit });
        }
        if (out !== l && label === undefined) label = labels.slice(0, j);
        if (label !== undefined && out !== undefined) label.push(out);
      }
      sample.push(label === undefined ? s : sampleOf(s.locationId, s.value, label));
    }
    // Times kept beside the samples (see SampleTimes) keep their indices:
    // one sample out per sample in. Under a denied key they are left out,
    // as a number label under one is.
    let times = sampleTimes(p);
    if (times !== undefined && modeOf(raw(times.key)) === 'deny') {
      const us = times.us;
      for (let i = 0; i < us.length; i++) if (!Number.isNaN(us[i])) this.#count('key');
      times = undefined;
    }

    // Names are scrubbed here (a memo miss costs a dozen regular
    // expressions): a step every `slice / 8` functions.
    const fn: PFunction[] = [];
    const fnDue = stepEvery(Math.max(1, slice / 8));
    for (let i = 0; i < p.function.length; i++) {
      if (fnDue()) yield;
      const f = p.function[i] as PFunction;
      const name = text(f.name);
      const systemName = text(f.systemName);
      const filename = text(f.filename);
      const same = name === Number(f.name) && systemName === Number(f.systemName) && filename === Number(f.filename);
      fn.push(same ? f : new PFunction({ id: f.id, name, systemName, filename, startLine: f.startLine }));
    }
    const mapping = p.mapping.map((m) => {
      const filename = text(m.filename);
      const buildId = text(m.buildId);
      if (filename === Number(m.filename) && buildId === Number(m.buildId)) return m;
      return new Mapping({
        id: m.id,
        memoryStart: m.memoryStart,
        memoryLimit: m.memoryLimit,
        fileOffset: m.fileOffset,
        filename,
        buildId,
        hasFunctions: m.hasFunctions,
        hasFilenames: m.hasFilenames,
        hasLineNumbers: m.hasLineNumbers,
        hasInlineFrames: m.hasInlineFrames,
      });
    });
    // Value types are not scrubbed: the same objects, their strings kept.
    const keepValueType = (v: ValueType): ValueType => {
      raw(v.type);
      raw(v.unit);
      return v;
    };
    // Every field that refers to the table is read before the blanking below.
    const fields = {
      sampleType: p.sampleType.map(keepValueType),
      ...(p.periodType ? { periodType: keepValueType(p.periodType) } : {}),
      dropFrames: text(p.dropFrames),
      keepFrames: text(p.keepFrames),
      comment: p.comment.map((c) => text(c, false)),
      defaultSampleType: raw(p.defaultSampleType),
      docUrl: text(p.docUrl),
    };
    // No string of the original survives unless a field refers to it as it is.
    // In steps: a 60,000-sample window's table has ~100,000 strings (its
    // spans' ids), a 4-5 ms loop in one go in a process's first windows.
    const blankDue = stepEvery(slice * 16);
    for (let i = 1; i < old.length; i++) {
      if (blankDue()) yield;
      if (kept[i] !== 1) strings[i] = '';
    }
    const scrubbed = new PprofProfile({
      ...fields,
      mapping,
      stringTable: new LazyStringTable(strings),
      timeNanos: p.timeNanos,
      durationNanos: p.durationNanos,
      period: p.period,
    });
    // Set after construction: pprof-format's constructor copies each array
    // it is given, one call per entry, in one go (~3 ms and one more array
    // of 60,000 entries kept until the window is written, for a window of
    // 60,000 samples). These hold its own classes' objects already.
    scrubbed.sample = sample;
    scrubbed.location = p.location;
    scrubbed.function = fn;
    return times === undefined ? scrubbed : setSampleTimes(scrubbed, times);
  }

  #scrubAttributes(attrs: Readonly<Record<string, AttributeValue>>): Record<string, AttributeValue> {
    const out: Record<string, AttributeValue> = {};
    for (const [k, v] of Object.entries(attrs)) {
      if (this.isAllowedKey(k)) out[k] = v;
      else if (this.isDeniedKey(k)) {
        this.#count('key');
        out[k] = REDACTED;
      } else out[k] = typeof v === 'string' ? this.scrubText(v, false) : v;
    }
    return out;
  }

  #scrubTail(t: TailSpanRef): TailSpanRef {
    const operation = this.scrubText(t.operation);
    return operation === t.operation ? t : { ...t, operation };
  }

  #count(kind: string): void {
    this.#counts.set(kind, (this.#counts.get(kind) ?? 0) + 1);
  }
}

interface Memo {
  readonly out: string;
  readonly kinds: readonly string[];
}

/** Entries of the scrubbed-text memo. */
const MEMO_MAX = 8192;
/** Longer text is scrubbed every time, not kept (the memo stays within a few MB). */
const MEMO_TEXT_MAX = 512;
