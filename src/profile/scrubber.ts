import type { Profile } from '../core/pprof.js';
import { Function as PFunction, Label, Mapping, Profile as PprofProfile, Sample, StringTable, ValueType } from '../core/pprof.js';
import type { AttributeValue, TailSpanRef, WindowProfile } from '../core/window.js';
import { runSliced, runSync, stepEvery, STEP_ENTRIES } from '../core/slices.js';
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
    return runSliced(this.#scrubSteps(window, sliceSamples));
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
   * redactions, so results are kept (see {@link Scrubber.#memo}).
   */
  scrubText(text: string): string {
    if (text === '') return text;
    const hit = this.#memo.get(text);
    if (hit !== undefined) {
      for (const k of hit.kinds) this.#count(k);
      return hit.out;
    }
    const kinds: string[] = [];
    const out = this.#scrubTextOnce(text, kinds);
    if (text.length <= MEMO_TEXT_MAX) {
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

  *#profileSteps(p: Profile, slice: number): Steps<Profile> {
    const old = p.stringTable.strings;
    const table = new StringTable();
    const memo = new Int32Array(old.length).fill(-1);
    const text = (i: number | bigint): number => {
      const n = Number(i);
      if (n === 0) return 0;
      const m = memo[n];
      if (m !== undefined && m !== -1) return m;
      const v = table.dedup(this.scrubText(old[n] ?? ''));
      memo[n] = v;
      return v;
    };
    const rawMemo = new Int32Array(old.length).fill(-1);
    const raw = (i: number | bigint): number => {
      const n = Number(i);
      if (n === 0) return 0;
      const m = rawMemo[n];
      if (m !== undefined && m !== -1) return m;
      const v = table.dedup(old[n] ?? '');
      rawMemo[n] = v;
      return v;
    };
    const redacted = table.dedup(REDACTED);

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
    // Per string index: 1 = has the shape its id key requires, 2 = not.
    const idShape = new Int8Array(old.length);
    // String labels repeat (thread, span, trace ids): one new Label per distinct {key, value}.
    const strLabels = new Map<number, Map<number, Label>>();
    const stringLabel = (k: number, v: number, mode: 'deny' | 'allow' | 'id' | 'text'): Label => {
      let byValue = strLabels.get(k);
      if (byValue === undefined) {
        byValue = new Map();
        strLabels.set(k, byValue);
      }
      let label = byValue.get(v);
      if (label !== undefined) {
        if (mode === 'deny') this.#count('key');
        return label;
      }
      let str: number;
      if (mode === 'deny') {
        this.#count('key');
        str = redacted;
      } else if (mode === 'allow') str = raw(v);
      else if (mode === 'id') {
        let shape = idShape[v];
        if (shape === 0) {
          shape = ID_SHAPES[old[k] ?? '']?.test(old[v] ?? '') === true ? 1 : 2;
          idShape[v] = shape;
        }
        str = shape === 1 ? raw(v) : text(v);
      } else str = text(v);
      label = new Label({ key: raw(k), str });
      byValue.set(v, label);
      return label;
    };

    const sample: Sample[] = [];
    const due = stepEvery(slice);
    for (const s of p.sample) {
      if (due()) yield;
      const label: Label[] = [];
      let changed = false;
      for (const l of s.label) {
        const k = Number(l.key);
        const mode = modeOf(k);
        const v = Number(l.str);
        if (v !== 0) {
          const nl = stringLabel(k, v, mode);
          if (nl !== l) changed = true;
          label.push(nl);
        } else if (mode === 'deny') {
          // A number under a secret key: leave the label out.
          this.#count('key');
          changed = true;
        } else {
          const key = raw(k);
          const unit = text(l.numUnit);
          if (key === k && unit === Number(l.numUnit)) label.push(l);
          else {
            changed = true;
            label.push(new Label({ key, num: l.num, numUnit: unit }));
          }
        }
      }
      sample.push(changed ? new Sample({ locationId: s.locationId, value: s.value, label }) : s);
    }

    // Names are scrubbed here (a memo miss costs a dozen regular
    // expressions): a step every `slice / 8` functions.
    const fn: PFunction[] = [];
    const fnDue = stepEvery(Math.max(1, slice / 8));
    for (const f of p.function) {
      if (fnDue()) yield;
      fn.push(new PFunction({ id: f.id, name: text(f.name), systemName: text(f.systemName), filename: text(f.filename), startLine: f.startLine }));
    }
    const mapping = p.mapping.map(
      (m) =>
        new Mapping({
          id: m.id,
          memoryStart: m.memoryStart,
          memoryLimit: m.memoryLimit,
          fileOffset: m.fileOffset,
          filename: text(m.filename),
          buildId: text(m.buildId),
          hasFunctions: m.hasFunctions,
          hasFilenames: m.hasFilenames,
          hasLineNumbers: m.hasLineNumbers,
          hasInlineFrames: m.hasInlineFrames,
        }),
    );
    const vt = (v: ValueType): ValueType => new ValueType({ type: raw(v.type), unit: raw(v.unit) });
    return new PprofProfile({
      sampleType: p.sampleType.map(vt),
      sample,
      mapping,
      location: p.location,
      function: fn,
      stringTable: table,
      dropFrames: text(p.dropFrames),
      keepFrames: text(p.keepFrames),
      timeNanos: p.timeNanos,
      durationNanos: p.durationNanos,
      ...(p.periodType ? { periodType: vt(p.periodType) } : {}),
      period: p.period,
      comment: p.comment.map((c) => text(c)),
      defaultSampleType: raw(p.defaultSampleType),
      docUrl: text(p.docUrl),
    });
  }

  #scrubAttributes(attrs: Readonly<Record<string, AttributeValue>>): Record<string, AttributeValue> {
    const out: Record<string, AttributeValue> = {};
    for (const [k, v] of Object.entries(attrs)) {
      if (this.isAllowedKey(k)) out[k] = v;
      else if (this.isDeniedKey(k)) {
        this.#count('key');
        out[k] = REDACTED;
      } else out[k] = typeof v === 'string' ? this.scrubText(v) : v;
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
