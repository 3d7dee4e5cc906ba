// Compatibility with real OpenTelemetry setups (issue 10). Each case runs a
// real Express/Fastify/node:http app under real HTTP load, once with spanfuse
// and once without (the baseline, shared by cases with the same app setup),
// and checks against what the app's own exporter received:
//  (1) the same spans (count and names) as without spanfuse;
//  (2) >= 99% of samples taken in request code carry the id of an exported
//      span that is innermost (for Express, the request-handler span);
//  (3) with the one-line recipe, tail spans in the app's exporter carry
//      profiler.tail, profiler.exemplar.id and figures;
//  (4) without it, spanfuse warns once with the fix and stats().fusion says so.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { leafIds, nameCounts, OTEL_PRELOAD_CJS, OTEL_PRELOAD_ESM, REQUESTS, runCase, ZERO_CODE } from './harness.js';
import type { AppSpan, CaseRun, CaseSpec } from './harness.js';

const SF_CJS = ['--require', 'spanfuse/register'];
const SF_ESM = ['--import', 'spanfuse/register'];
const OTEL_CJS = ['--require', OTEL_PRELOAD_CJS];
const OTEL_ESM = ['--import', OTEL_PRELOAD_ESM];
const ZERO = ['--require', ZERO_CODE];

type Baseline = 'cjs-express-sdk' | 'cjs-express-later' | 'cjs-express-manual' | 'cjs-express-zero' | 'cjs-fastify-sdk' | 'esm-express-sdk' | 'esm-fastify-manual';

const BASELINES: Record<Baseline, CaseSpec> = {
  'cjs-express-sdk': { module: 'cjs', framework: 'express', preload: OTEL_CJS, env: { COMPAT_OTEL_PRELOAD: 'sdk' } },
  'cjs-express-later': { module: 'cjs', framework: 'express', preload: [], env: { COMPAT_OTEL_LATER: 'sdk' } },
  'cjs-express-manual': { module: 'cjs', framework: 'express', preload: [], env: { COMPAT_OTEL_IN_APP: 'manual' } },
  'cjs-express-zero': { module: 'cjs', framework: 'express', preload: ZERO, env: {}, otlp: true },
  'cjs-fastify-sdk': { module: 'cjs', framework: 'fastify', preload: OTEL_CJS, env: { COMPAT_OTEL_PRELOAD: 'sdk' } },
  'esm-express-sdk': { module: 'esm', framework: 'express', preload: OTEL_ESM, env: { COMPAT_OTEL_PRELOAD: 'sdk' } },
  'esm-fastify-manual': { module: 'esm', framework: 'fastify', preload: [], env: { COMPAT_OTEL_IN_APP: 'manual' } },
};

interface Case {
  readonly name: string;
  readonly baseline: Baseline;
  readonly spec: CaseSpec;
  /** The app wraps its exporter's processor with `sf.spanProcessor(...)`. */
  readonly recipe: boolean;
  /** Text the one fusion warning must contain (unfused setups). */
  readonly warning?: string;
}

const cases: Case[] = [
  {
    name: 'CJS Express, NodeSDK preload after spanfuse (the README order), no recipe',
    baseline: 'cjs-express-sdk',
    spec: { module: 'cjs', framework: 'express', preload: [...SF_CJS, ...OTEL_CJS], env: { COMPAT_OTEL_PRELOAD: 'sdk' } },
    recipe: false,
    warning: 'does not run spanfuse.spanProcessor()',
  },
  {
    name: 'CJS Express, NodeSDK preload before spanfuse, no recipe',
    baseline: 'cjs-express-sdk',
    spec: { module: 'cjs', framework: 'express', preload: [...OTEL_CJS, ...SF_CJS], env: { COMPAT_OTEL_PRELOAD: 'sdk' } },
    recipe: false,
    warning: 'registered before spanfuse started',
  },
  {
    name: 'CJS Express, NodeSDK preload after spanfuse, one-line recipe',
    baseline: 'cjs-express-sdk',
    spec: { module: 'cjs', framework: 'express', preload: [...SF_CJS, ...OTEL_CJS], env: { COMPAT_OTEL_PRELOAD: 'sdk-recipe' } },
    recipe: true,
  },
  {
    name: "CJS Express, SPANFUSE_AUTO_INSTRUMENT=http, then NodeSDK preload with the recipe: spanfuse's instrumentation adds no span",
    baseline: 'cjs-express-sdk',
    spec: {
      module: 'cjs',
      framework: 'express',
      preload: [...SF_CJS, ...OTEL_CJS],
      env: { COMPAT_OTEL_PRELOAD: 'sdk-recipe', SPANFUSE_AUTO_INSTRUMENT: 'http' },
    },
    recipe: true,
  },
  {
    name: 'CJS Express, NodeSDK started in the first line of the app, one-line recipe',
    baseline: 'cjs-express-sdk',
    spec: { module: 'cjs', framework: 'express', preload: SF_CJS, env: { COMPAT_OTEL_IN_APP: 'sdk-recipe' } },
    recipe: true,
  },
  {
    name: 'CJS Express, NodeSDK started later in the app, after it used a tracer it keeps, one-line recipe',
    baseline: 'cjs-express-later',
    spec: { module: 'cjs', framework: 'express', preload: SF_CJS, env: { COMPAT_OTEL_LATER: 'sdk-recipe' } },
    recipe: true,
  },
  {
    name: 'CJS Express, NodeTracerProvider.register() in the app, no recipe',
    baseline: 'cjs-express-manual',
    spec: { module: 'cjs', framework: 'express', preload: SF_CJS, env: { COMPAT_OTEL_IN_APP: 'manual' } },
    recipe: false,
    warning: 'does not run spanfuse.spanProcessor()',
  },
  {
    name: "CJS Express, OpenTelemetry's zero-code register after spanfuse",
    baseline: 'cjs-express-zero',
    spec: { module: 'cjs', framework: 'express', preload: [...SF_CJS, ...ZERO], env: {}, otlp: true },
    recipe: false,
    warning: 'auto-instrumentations-node/register',
  },
  {
    name: 'CJS Fastify, NodeSDK preload after spanfuse, one-line recipe',
    baseline: 'cjs-fastify-sdk',
    spec: { module: 'cjs', framework: 'fastify', preload: [...SF_CJS, ...OTEL_CJS], env: { COMPAT_OTEL_PRELOAD: 'sdk-recipe' } },
    recipe: true,
  },
  {
    name: 'ESM Express (--import, ESM loader hook), NodeSDK preload after spanfuse, one-line recipe',
    baseline: 'esm-express-sdk',
    spec: { module: 'esm', framework: 'express', preload: [...SF_ESM, ...OTEL_ESM], env: { COMPAT_OTEL_PRELOAD: 'sdk-recipe' } },
    recipe: true,
  },
  {
    name: 'ESM Express (--import, ESM loader hook), NodeSDK preload before spanfuse, no recipe',
    baseline: 'esm-express-sdk',
    spec: { module: 'esm', framework: 'express', preload: [...OTEL_ESM, ...SF_ESM], env: { COMPAT_OTEL_PRELOAD: 'sdk' } },
    recipe: false,
    warning: 'registered before spanfuse started',
  },
  {
    name: 'ESM Fastify, NodeTracerProvider.register() in the app, one-line recipe',
    baseline: 'esm-fastify-manual',
    spec: { module: 'esm', framework: 'fastify', preload: SF_ESM, env: { COMPAT_OTEL_IN_APP: 'manual-recipe' } },
    recipe: true,
  },
];

const baselineRuns = new Map<Baseline, Promise<CaseRun>>();
function baseline(b: Baseline): Promise<CaseRun> {
  let p = baselineRuns.get(b);
  if (p === undefined) {
    p = runCase(BASELINES[b]);
    baselineRuns.set(b, p);
  }
  return p;
}

const FUSION_WARNING = /\[SPANFUSE\] Warning: spanfuse: .*spanProcessor\(\)/g;

/** Share of request-code samples whose span is an exported innermost span (and, for Express, the handler's). */
function attribution(run: CaseRun, framework: string): { share: number; detail: Record<string, number> } {
  const byId = new Map<string, AppSpan>(run.spans.map((s) => [s.spanId, s]));
  const leaves = leafIds(run.spans);
  let good = 0;
  const detail: Record<string, number> = {};
  for (const id of run.requestSampleSpanIds) {
    const span = byId.get(id);
    const what = span === undefined ? (id === '' ? '<no span>' : '<not exported>') : span.name;
    detail[what] = (detail[what] ?? 0) + 1;
    if (span === undefined || !leaves.has(id)) continue;
    if (framework === 'express' && !span.name.startsWith('request handler')) continue;
    good++;
  }
  return { share: run.requestSampleSpanIds.length === 0 ? 0 : good / run.requestSampleSpanIds.length, detail };
}

// Two apps at a time: the machine has two cores, and the checks are not timed.
void describe('compat: real OpenTelemetry setups', { concurrency: 2 }, () => {
  for (const c of cases) {
    void it(c.name, async () => {
      // One app at a time per case (with two cases at a time: at most two apps run).
      const base = await baseline(c.baseline);
      const run = await runCase(c.spec);
      assert.equal(base.code, 0, `baseline exited ${base.code}:\n${base.stderr}`);
      assert.equal(run.code, 0, `app exited ${run.code}:\n${run.stderr}`);

      // (1) The app's exporter gets exactly its spans.
      assert.ok(base.spans.length > REQUESTS, `baseline exported only ${base.spans.length} spans`);
      assert.deepEqual(nameCounts(run.spans), nameCounts(base.spans), 'span names and counts differ from the app without spanfuse');
      if (c.spec.env.COMPAT_OTEL_LATER !== undefined) {
        // The tracer the app got before its SDK started follows the SDK's provider.
        assert.deepEqual(run.spans.filter((s) => s.name.endsWith('-sdk')).map((s) => s.name), ['after-sdk']);
      }

      // (2) Request-code samples carry the app's innermost spans.
      assert.ok(run.requestSamples >= 50, `only ${run.requestSamples} samples in request code`);
      const a = attribution(run, c.spec.framework);
      assert.ok(a.share >= 0.99, `${(a.share * 100).toFixed(1)}% of request samples on the app's innermost spans: ${JSON.stringify(a.detail)}`);

      // (3) and (4): tails reach the app's exporter, or spanfuse says why not.
      const tails = run.spans.filter((s) => s.attributes['profiler.tail'] === true);
      const warnings = run.stderr.match(FUSION_WARNING) ?? [];
      if (c.recipe) {
        assert.ok(tails.length > 0, 'no tail span reached the app exporter');
        for (const t of tails) assert.match(String(t.attributes['profiler.exemplar.id']), /^[0-9a-f]{32}$/);
        assert.ok(
          tails.some((t) => Number(t.attributes['profiler.samples']) > 0 && Number(t.attributes['profiler.wall.time_ns']) > 0),
          `no tail span carries sample figures: ${JSON.stringify(
            tails.map((t) => [t.name, t.attributes['profiler.exemplar.status'], t.attributes['profiler.samples'], t.attributes['profiler.wall.time_ns']]),
          )}\n${run.stderr}`,
        );
        assert.equal(run.fusion?.state, 'fused');
        assert.deepEqual(warnings, []);
      } else {
        assert.equal(tails.length, 0);
        assert.equal(warnings.length, 1, `expected one fusion warning:\n${run.stderr}`);
        assert.ok(run.stderr.includes(c.warning ?? ''), `warning lacks "${c.warning}":\n${run.stderr}`);
        assert.equal(run.fusion?.state, 'unfused');
      }
      // Nothing of the app's spans went to spanfuse's own file instead.
      assert.notEqual(run.fusion?.state, 'spanfuse-provider');
      // spanfuse's context manager serves in both orders: kept when first, replacing the app's when after.
      const spanfuseFirst = c.spec.preload.indexOf('spanfuse/register') === 1;
      assert.equal(run.fusion?.contextManager, spanfuseFirst ? 'spanfuse' : 'spanfuse-replaced-app');
    });
  }

  void it('no OpenTelemetry in the app + SPANFUSE_AUTO_INSTRUMENT=http: request spans in spans.jsonl, labels on them', async () => {
    const run = await runCase({
      module: 'esm',
      framework: 'http',
      preload: SF_ESM,
      env: { SPANFUSE_AUTO_INSTRUMENT: 'http' },
      spansJsonl: true,
    });
    assert.equal(run.code, 0, run.stderr);
    const server = run.spans.filter((s) => s.attributes['http.method'] === 'GET' || s.attributes['http.request.method'] === 'GET');
    assert.equal(server.length, REQUESTS + 1, `server spans: ${JSON.stringify(nameCounts(run.spans))}`);
    assert.equal(run.fusion?.state, 'spanfuse-provider');
    assert.equal(run.fusion?.autoInstrument, 'http');
    assert.ok(run.requestSamples >= 50, `only ${run.requestSamples} samples in request code`);
    const a = attribution(run, 'http');
    assert.ok(a.share >= 0.99, `${(a.share * 100).toFixed(1)}% labelled with spans.jsonl spans: ${JSON.stringify(a.detail)}`);
  });
});
