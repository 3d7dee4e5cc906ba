/** Command-line options of the overhead benchmark (see docs/benchmark.md). */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CONFIGS } from './configs.js';
import type { BenchConfig } from './configs.js';
import { SERVICE_MIXES } from './work.js';
import type { ServiceName } from './work.js';

export interface Runtime {
  readonly name: string;
  readonly bin: string;
}

export interface Options {
  readonly mode: 'overhead' | 'soak';
  /** Name of the run in file names: soak, short, full (every timing at its default) or custom. */
  readonly kind: 'soak' | 'short' | 'full' | 'custom';
  readonly short: boolean;
  readonly rounds: number;
  readonly warmupSec: number;
  readonly durationSec: number;
  readonly windowMs: number;
  readonly connections: number;
  readonly unitIterations: number;
  readonly configs: readonly BenchConfig[];
  readonly runtimes: readonly Runtime[];
  readonly spanfuseModule: string;
  readonly pin: boolean;
  /** Which service the load drives: the default request mix or issue 11's route. */
  readonly service: ServiceName;
  readonly serverCpu: string;
  readonly loadCpu: string;
  readonly outDir: string;
  readonly note: string;
  readonly memorySampleMs: number;
  readonly soakMinutes: number;
  readonly repoRoot: string;
  /** Keep every received profile and spanfuse output folder here (debugging). */
  readonly keepDir: string | undefined;
  /** Extra node flags for every server process (e.g. --cpu-prof to profile the profiler). */
  readonly serverFlags: readonly string[];
}

/** The repository root: the nearest folder up whose package.json is spanfuse's. */
export function findRepoRoot(from: string = dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'bench', 'overhead'))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error(`cannot find the spanfuse repository above ${from}`);
    dir = up;
  }
}

export const USAGE = `usage: node dist/bench/overhead/run.js [options]
  --short                 quick validation run (a few minutes): 2 rounds, 3 s warm-up, 8 s measured
  --soak                  soak mode: one long run per config (default control,spanfuse-default
                          on node24), RSS/heap slope
  --soak-minutes N        soak length (default 30)
  --render FILE.json      re-render a stored results file as markdown (nothing runs)
  --rounds N              interleaved rounds (default 5)
  --warmup S              warm-up seconds per run (default 10)
  --duration S            measured seconds per run (default 40)
  --window-ms N           export period given to every profiler (default duration/4)
  --connections N         load connections (default 20)
  --unit N                CPU kernel iterations per work unit (default 250000)
  --configs a,b,...       configurations (default: ${CONFIGS.filter((c) => c.byDefault)
    .map((c) => c.name)
    .join(',')}; all: ${CONFIGS.map((c) => c.name).join(',')})
  --nodes a,b             runtimes: node20 (node on PATH), node24 (node_modules/node), or name=/path/to/node
  --spanfuse PATH         spanfuse module to load (default <repo>/dist/src/index.js)
  --baseline DIR          A/B two builds in one interleaved run: every spanfuse configuration C
                          gets a twin C@base loading DIR/dist/src/index.js (DIR: another checkout,
                          e.g. a git worktree of an older commit, built)
  --no-pin                do not pin server and load generator to cores
  --service NAME          default (mix of /json, /async, /fanout) or issue11 (~1.8 ms CPU
                          around one await setImmediate, issue 11's service)
  --server-cpu N          core for the server (default 0); --load-cpu N (default 1)
  --out DIR               results folder (default <repo>/bench/results)
  --note TEXT             free text stored with the results (e.g. "machine busy")
  --keep DIR              keep received profiles and spanfuse's output folder under DIR
  --server-flag FLAG      extra node flag for the server processes, repeatable
                          (e.g. --server-flag=--cpu-prof --server-flag=--cpu-prof-dir=/tmp/prof)`;

function int(v: string | undefined, name: string, dflt: number, min: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || n < min) throw new Error(`--${name}: expected a number >= ${min}, got ${JSON.stringify(v)}`);
  return n;
}

function parseService(v: string | undefined): ServiceName {
  if (v === undefined) return 'default';
  if (v in SERVICE_MIXES) return v as ServiceName;
  throw new Error(`--service: expected one of ${Object.keys(SERVICE_MIXES).join(', ')}, got ${JSON.stringify(v)}`);
}

export function parseOptions(argv: readonly string[]): Options {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      short: { type: 'boolean', default: false },
      soak: { type: 'boolean', default: false },
      'soak-minutes': { type: 'string' },
      rounds: { type: 'string' },
      warmup: { type: 'string' },
      duration: { type: 'string' },
      'window-ms': { type: 'string' },
      connections: { type: 'string' },
      unit: { type: 'string' },
      configs: { type: 'string' },
      nodes: { type: 'string' },
      spanfuse: { type: 'string' },
      baseline: { type: 'string' },
      'no-pin': { type: 'boolean', default: false },
      service: { type: 'string' },
      'server-cpu': { type: 'string' },
      'load-cpu': { type: 'string' },
      out: { type: 'string' },
      note: { type: 'string' },
      keep: { type: 'string' },
      'server-flag': { type: 'string', multiple: true },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help === true) {
    console.log(USAGE);
    process.exit(0);
  }
  const repoRoot = findRepoRoot();
  const soak = values.soak === true;
  const short = values.short === true;
  const soakMinutes = int(values['soak-minutes'], 'soak-minutes', short ? 2 : 30, 0.1);
  const durationSec = soak ? soakMinutes * 60 : int(values.duration, 'duration', short ? 8 : 40, 1);
  const names = values.configs?.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const defaultNames = soak ? ['control', 'spanfuse-default'] : CONFIGS.filter((c) => c.byDefault).map((c) => c.name);
  const configs = (names ?? defaultNames).map((n) => {
    const c = CONFIGS.find((x) => x.name === n);
    if (c === undefined) throw new Error(`--configs: unknown configuration ${JSON.stringify(n)}; known: ${CONFIGS.map((x) => x.name).join(', ')}`);
    return c;
  });
  if (!soak && configs[0]?.name !== 'control') {
    if (!configs.some((c) => c.name === 'control')) {
      const control = CONFIGS.find((c) => c.name === 'control');
      if (control !== undefined) configs.unshift(control);
    }
    // A configuration measured against another (the pprof-* floor against
    // `untraced`) brings that one along, right after the control.
    for (const ref of new Set(configs.map((c) => c.reference).filter((r): r is string => r !== undefined))) {
      const rc = CONFIGS.find((x) => x.name === ref);
      if (rc !== undefined && !configs.includes(rc)) configs.splice(1, 0, rc);
    }
  }
  if (values.baseline !== undefined) {
    const baseModule = resolve(values.baseline, 'dist', 'src', 'index.js');
    if (!existsSync(baseModule)) throw new Error(`--baseline: ${baseModule} not found (build that checkout first)`);
    for (const c of [...configs]) {
      if (c.profiler === 'spanfuse') configs.splice(configs.indexOf(c) + 1, 0, { ...c, name: `${c.name}@base`, byDefault: false, spanfuseModule: baseModule });
    }
  }
  const runtimes = (values.nodes ?? (soak ? 'node24' : 'node24,node20')).split(',').map((s): Runtime => {
    const t = s.trim();
    if (t === 'node20') return { name: 'node20', bin: 'node' };
    if (t === 'node24') return { name: 'node24', bin: join(repoRoot, 'node_modules', 'node', 'bin', 'node') };
    const eq = t.indexOf('=');
    if (eq > 0) return { name: t.slice(0, eq), bin: t.slice(eq + 1) };
    throw new Error(`--nodes: expected node20, node24 or name=/path/to/node, got ${JSON.stringify(t)}`);
  });
  const windowDefault = Math.max(1000, Math.floor((durationSec * 1000) / 4));
  const timingsDefault =
    values.rounds === undefined &&
    values.warmup === undefined &&
    values.duration === undefined &&
    values['window-ms'] === undefined &&
    values.connections === undefined &&
    values.unit === undefined;
  return {
    mode: soak ? 'soak' : 'overhead',
    kind: soak ? 'soak' : !timingsDefault ? 'custom' : short ? 'short' : 'full',
    short,
    rounds: soak ? 1 : int(values.rounds, 'rounds', short ? 2 : 5, 1),
    warmupSec: int(values.warmup, 'warmup', short ? 3 : 10, 0),
    durationSec,
    windowMs: int(values['window-ms'], 'window-ms', soak ? 15_000 : windowDefault, 100),
    connections: int(values.connections, 'connections', 20, 1),
    unitIterations: int(values.unit, 'unit', 250_000, 1),
    service: parseService(values.service),
    configs,
    runtimes,
    spanfuseModule: resolve(values.spanfuse ?? join(repoRoot, 'dist', 'src', 'index.js')),
    pin: values['no-pin'] !== true,
    serverCpu: values['server-cpu'] ?? '0',
    loadCpu: values['load-cpu'] ?? '1',
    outDir: resolve(values.out ?? join(repoRoot, 'bench', 'results')),
    note: values.note ?? '',
    memorySampleMs: soak ? 10_000 : 1000,
    soakMinutes,
    repoRoot,
    keepDir: values.keep === undefined ? undefined : resolve(values.keep),
    serverFlags: values['server-flag'] ?? [],
  };
}
