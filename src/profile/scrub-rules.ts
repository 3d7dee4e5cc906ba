/**
 * What the scrubber treats as sensitive. Keys are compared after lowercasing
 * and removing everything but letters and digits, so `api_key`, `Api-Key`
 * and `apiKey` are one key.
 */
export const DENY_KEY_PARTS: readonly string[] = [
  'password',
  'passwd',
  'pwd',
  'secret',
  'token',
  'authorization',
  'auth',
  'cookie',
  'session',
  'apikey',
  'credential',
  'privatekey',
  'accesskey',
  'signature',
  'jwt',
  'bearer',
  'creditcard',
  'cardnumber',
];

export const REDACTED = '[redacted]';

/** Our own label keys whose values are ids by contract and must survive. */
export const ID_LABEL_KEYS: ReadonlySet<string> = new Set(['trace_id', 'span_id', 'local_root_span_id', 'trace_flags']);

export function normalizeKey(key: string): string {
  return key.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** Value patterns that look like secrets wherever they appear. Each has the global flag. */
export const SECRET_PATTERNS: readonly { readonly name: string; readonly re: RegExp }[] = [
  // Authorization header values.
  { name: 'bearer', re: /\b(?:bearer|basic)\s+(?=[A-Za-z0-9\-._~+/]*\d)[A-Za-z0-9\-._~+/]{8,}=*/gi },
  // JWT: three base64url segments, the first two starting like JSON ("ey").
  { name: 'jwt', re: /\bey[A-Za-z0-9_-]{8,}\.ey[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  // PEM private keys.
  { name: 'private-key', re: /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g },
  // user:password@ in URLs.
  { name: 'url-credentials', re: /(?<=\/\/)[^/\s:@]+:[^/\s@]+@/g },
  // Well-known key formats.
  { name: 'aws-key', re: /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g },
  { name: 'github-token', re: /\bgh[pousr]_[A-Za-z0-9]{30,}\b/g },
  { name: 'slack-token', re: /\bxox[abposr]-[A-Za-z0-9-]{10,}\b/g },
  { name: 'stripe-key', re: /\b(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{10,}\b/g },
  { name: 'google-key', re: /\bAIza[0-9A-Za-z_-]{30,}\b/g },
  // E-mail addresses.
  { name: 'email', re: /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g },
  // Long hex runs (keys, hashes of secrets).
  { name: 'hex', re: /\b[0-9a-fA-F]{32,}\b/g },
];

/**
 * `key=value` / `key: value` inside longer strings (query strings, SQL,
 * cookies) whose key holds a sensitive word; group 1 is the key part kept.
 */
export const ASSIGNMENT =
  /([A-Za-z0-9_.-]*(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|auth|session(?:[_-]?id)?|cookie|credential|private[_-]?key|signature|sig)[A-Za-z0-9_.-]*\s*[=:]\s*)(['"]?)[^\s&,;"'<>]+\2/gi;

/** Candidates for base64/base64url keys; `looksRandom` decides. */
export const BASE64_CANDIDATE = /[A-Za-z0-9+/_-]{24,}={0,2}/g;

/**
 * True for runs that look like random base64 rather than an identifier or a
 * path: counts class changes (lower->upper, letter<->digit; upper->lower is
 * free because every camelCase word starts that way). Random base64 changes
 * class on about half its characters, camelCase names on well under a third.
 */
export function looksRandom(run: string): boolean {
  if (run.startsWith('/')) return false; // a path, not a key
  let prev = -1;
  let counted = 0;
  let changes = 0;
  let classes = 0;
  for (let i = 0; i < run.length; i++) {
    const c = run.charCodeAt(i);
    const cls = c >= 65 && c <= 90 ? 0 : c >= 97 && c <= 122 ? 1 : c >= 48 && c <= 57 ? 2 : -1;
    if (cls === -1) continue;
    classes |= 1 << cls;
    counted++;
    if (prev !== -1 && cls !== prev && !(prev === 0 && cls === 1)) changes++;
    prev = cls;
  }
  const mixed = classes === 7 || classes === 3 || classes === 5 || classes === 6;
  if (counted < 24 || !mixed) return false;
  // Long runs with upper, lower and several digits are keys, not names.
  if (counted >= 32 && classes === 7 && digitCount(run) >= 3) return true;
  return changes / counted >= 0.25;
}

/** Digit runs 13-19 long (spaces or dashes allowed) that pass the Luhn check are card numbers. */
const CARD_CANDIDATE = /\b(?:\d[ -]?){12,18}\d\b/g;

export function redactCards(s: string, onHit: () => void): string {
  return s.replace(CARD_CANDIDATE, (m) => {
    const digits = m.replace(/[ -]/g, '');
    if (digits.length < 13 || digits.length > 19 || !luhn(digits)) return m;
    onHit();
    return REDACTED;
  });
}

export function luhn(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return false;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

function digitCount(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) n++;
  }
  return n;
}
