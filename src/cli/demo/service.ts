/**
 * The demo service: node:http, no framework. Routes mix synchronous CPU work
 * with awaits, the way real handlers do, and each request runs in a SERVER
 * span (manual instrumentation; auto-instrumentations would do the same).
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';

const self = fileURLToPath(import.meta.url);
const tracer = trace.getTracer('spanfuse-demo');

function priceCart(items: number): number {
  let total = 0;
  for (let i = 0; i < items * 2000; i++) total += Math.sqrt(i % 97) * 1.07;
  return Math.round(total);
}

function renderJson(rows: number): string {
  const data = Array.from({ length: rows }, (_, i) => ({ id: i, name: `item-${i}`, tags: ['a', 'b', String(i % 7)] }));
  return JSON.stringify(JSON.parse(JSON.stringify(data)));
}

function hashReport(rounds: number): string {
  let h = 'seed';
  for (let i = 0; i < rounds; i++) h = createHash('sha256').update(h).digest('hex');
  return h;
}

async function checkout(): Promise<string> {
  const price = priceCart(150);
  await sleep(3); // the payment gateway
  const body = renderJson(200);
  return `${price}:${body.length}`;
}

async function search(): Promise<string> {
  const text = await readFile(self, 'utf8');
  const hits = [/await/g, /span/g, /route/g].map((re) => (text.match(re) ?? []).length);
  await Promise.all([sleep(1), sleep(2), Promise.resolve(priceCart(40))]);
  return hits.join(',');
}

let reports = 0;
async function report(): Promise<string> {
  // One request in a hundred builds the full report: the latency tail.
  const heavy = ++reports % 100 === 0;
  const h = hashReport(heavy ? 40_000 : 800);
  await sleep(2);
  return h.slice(0, 8);
}

const routes: Record<string, () => Promise<string>> = {
  '/checkout': checkout,
  '/search': search,
  '/report': report,
};

export const DEMO_ROUTES = Object.keys(routes);

export function createDemoServer(): http.Server {
  return http.createServer((req, res) => {
    const route = (req.url ?? '/').split('?')[0] ?? '/';
    const handler = routes[route];
    if (handler === undefined) {
      res.statusCode = 404;
      res.end('not found');
      return;
    }
    const attributes = { 'http.request.method': req.method ?? 'GET', 'http.route': route };
    void tracer.startActiveSpan(`${req.method ?? 'GET'} ${route}`, { kind: SpanKind.SERVER, attributes }, async (span) => {
      try {
        res.end(await handler());
      } catch (err) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: String(err) });
        res.statusCode = 500;
        res.end();
      } finally {
        span.end();
      }
    });
  });
}
