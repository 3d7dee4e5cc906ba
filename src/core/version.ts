import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fs } from './builtins.js';

const { readFileSync } = fs;

let cached: string | undefined;

/**
 * spanfuse's own version, read once from its package.json. The folder depth
 * differs between src/ (tests) and dist/src/ (published), so walk up to the
 * first package.json named spanfuse.
 */
export function spanfuseVersion(): string {
  if (cached !== undefined) return cached;
  cached = 'unknown';
  try {
    let dir = dirname(fileURLToPath(import.meta.url));
    for (let i = 0; i < 6; i++) {
      try {
        const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
        if (pkg.name === 'spanfuse' && typeof pkg.version === 'string') {
          cached = pkg.version;
          break;
        }
      } catch {
        // not here; keep walking up
      }
      const up = dirname(dir);
      if (up === dir) break;
      dir = up;
    }
  } catch {
    // keep 'unknown'
  }
  return cached;
}
