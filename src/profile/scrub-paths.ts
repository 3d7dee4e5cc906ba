import { fileURLToPath } from 'node:url';

/**
 * Makes file paths safe to export: paths under the app root become relative
 * to it, home directories become `~` and the user's name never shows.
 */
export class PathScrubber {
  readonly #root: string;
  readonly #userNames: readonly string[];
  readonly #home: RegExp;

  constructor(appRoot: string, userNames: readonly string[]) {
    this.#root = appRoot.replace(/[/\\]+$/, '');
    // Generic account names (the node image's `node`, `root`) name nobody and
    // would mangle paths like /usr/lib/node; their homes are still replaced.
    this.#userNames = userNames.filter((u) => u.length >= 2 && !GENERIC_USERS.has(u));
    // /home/NAME, /Users/NAME, C:\Users\NAME, /root
    this.#home = /(?:\/home\/[^/\s\\]+|\/Users\/[^/\s\\]+|[A-Za-z]:\\Users\\[^\\\s/]+|\/root(?=\/|$|\s))/g;
  }

  /** Returns the scrubbed text and whether anything changed. */
  scrub(text: string): string {
    let s = text;
    if (s.startsWith('file://')) {
      try {
        s = fileURLToPath(s.split(/[?#]/, 1)[0] ?? s);
      } catch {
        // not a valid file URL; treat as text
      }
    }
    if (this.#root !== '' && this.#root !== '/') {
      // Inside text (span names, messages) as well as whole paths.
      if (s === this.#root) s = '.';
      else s = s.split(`${this.#root}/`).join('').split(`${this.#root}\\`).join('');
    }
    s = s.replace(this.#home, '~');
    for (const u of this.#userNames) {
      // As a path segment: /opt/alice/app or C:\alice\app.
      if (s.includes(u)) s = s.replace(new RegExp(`(?<=[/\\\\])${escape(u)}(?=[/\\\\]|$)`, 'g'), '<user>');
    }
    return s;
  }
}

const GENERIC_USERS = new Set(['node', 'root', 'app', 'nobody', 'www-data', 'daemon', 'runner', 'user', 'admin']);

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
