// The generated pages in a real browser (Debian chromium through
// playwright-core): the tail spans' burn function is drawn, clicking it
// zooms, search finds it, and the diff marks it as run by tail spans only.
// Screenshots go to dist/test-output/flame/ for humans.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { cli, OPERATION, outputDir, profiledRun } from './helpers.js';

const CHROMIUM = process.env.SPANFUSE_CHROMIUM ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const skip = hasChromium ? false : `no chromium at ${CHROMIUM} (apt-get install chromium; SPANFUSE_REQUIRE_CHROMIUM=1 makes this a failure)`;
if (!hasChromium) assert.notEqual(process.env.SPANFUSE_REQUIRE_CHROMIUM, '1', `chromium is required here (SPANFUSE_REQUIRE_CHROMIUM=1) but ${CHROMIUM} is missing`);

interface Drawn {
  name: string;
  x: number;
  y: number;
  w: number;
  h: number;
  matched: boolean;
  kind: string;
}

const shots = outputDir();
const tag = `node${process.versions.node.split('.')[0]}`;
let browser: Browser | undefined;
let flamePage = '';
let diffPage = '';

before(async () => {
  if (!hasChromium) return;
  mkdirSync(shots, { recursive: true });
  const r = await profiledRun();
  assert.equal(r.run.code, 0, r.run.stderr);
  flamePage = join(shots, `tail-${tag}.html`);
  diffPage = join(shots, `diff-${tag}.html`);
  const f = await cli(['flame', r.dir, '--operation', OPERATION, '--tail', '--cpu', '-o', flamePage]);
  assert.equal(f.code, 0, f.stderr);
  const d = await cli(['diff', r.dir, '--operation', OPERATION, '--cpu', '-o', diffPage]);
  assert.equal(d.code, 0, d.stderr);
  browser = await chromium.launch({ executablePath: CHROMIUM });
});

after(async () => {
  await browser?.close();
});

async function open(file: string): Promise<{ page: Page; errors: string[] }> {
  const page = await browser!.newPage({ viewport: { width: 1280, height: 800 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  // Opened from disk: any request to the network would show up here.
  page.on('request', (req) => {
    if (!req.url().startsWith('file://')) errors.push(`network request ${req.url()}`);
  });
  await page.goto(`file://${file}`);
  await page.waitForFunction(() => (globalThis as { __flame?: unknown }).__flame !== undefined, null, { timeout: 30_000 });
  return { page, errors };
}

const drawn = (page: Page): Promise<Drawn[]> => page.evaluate(() => (globalThis as unknown as { __flame: { drawn(): Drawn[] } }).__flame.drawn());
const canvasBox = (page: Page): Promise<{ x: number; y: number; w: number; h: number }> =>
  page.evaluate(() => (globalThis as unknown as { __flame: { canvasBox(): { x: number; y: number; w: number; h: number } } }).__flame.canvasBox());

async function shot(page: Page, name: string): Promise<void> {
  const path = join(shots, `${name}-${tag}.png`);
  await page.screenshot({ path, fullPage: true });
  console.log(`screenshot: ${path}`);
}

test('flamegraph page: burn function drawn, click zooms on it, hover shows its figures, search finds it', { skip }, async () => {
  const { page, errors } = await open(flamePage);
  assert.match(await page.textContent('#title') ?? '', /tail spans of operation GET \/checkout \(SERVER\)/);
  assert.match(await page.textContent('header') ?? '', /\d+ samples, \d+ spans with samples, \d+ of \d+ windows/);
  const before = await drawn(page);
  const burn = before.find((d) => d.name === 'tail_only_burn');
  assert.ok(burn, `tail_only_burn is drawn (drawn: ${before.map((d) => d.name).join(', ')})`);
  await shot(page, 'flame');
  const box = await canvasBox(page);
  // Tail spans also run common_work: before the zoom the burn is narrower than the graph.
  assert.ok(burn.w < box.w - 2, `tail_only_burn is ${burn.w} px of ${box.w} before the zoom`);

  // Hover: the tooltip names the frame with its CPU and wall figures.
  await page.mouse.move(box.x + burn.x + burn.w / 2, box.y + burn.y + burn.h / 2);
  const tip = (await page.textContent('#tip')) ?? '';
  assert.match(tip, /tail_only_burn/);
  assert.match(tip, /wall.*CPU|CPU.*wall/s);
  assert.match(tip, /% of all/);

  // Click: the frame fills the width and the page says it is zoomed.
  await page.mouse.click(box.x + burn.x + burn.w / 2, box.y + burn.y + burn.h / 2);
  const focus = await page.evaluate(() => (globalThis as unknown as { __flame: { focus(): string | null } }).__flame.focus());
  assert.equal(focus, 'tail_only_burn');
  const zoomed = (await drawn(page)).find((d) => d.name === 'tail_only_burn');
  assert.ok(zoomed && zoomed.w >= box.w - 2, `zoomed frame spans the width (${zoomed?.w} of ${box.w})`);
  assert.match((await page.textContent('#zoom')) ?? '', /zoomed on tail_only_burn/);
  await shot(page, 'flame-zoomed');

  // Esc resets; search highlights the function and reports its share.
  await page.keyboard.press('Escape');
  assert.equal(await page.evaluate(() => (globalThis as unknown as { __flame: { focus(): string | null } }).__flame.focus()), null);
  await page.fill('#search', 'tail_only');
  assert.match((await page.textContent('#status')) ?? '', /^1 function matched, \d+(\.\d)?% of CPU$/);
  const found = await drawn(page);
  assert.equal(found.find((d) => d.name === 'tail_only_burn')?.matched, true);
  assert.ok(found.filter((d) => d.matched).every((d) => d.name === 'tail_only_burn'));
  await shot(page, 'flame-search');
  assert.deepEqual(errors, []);
  await page.close();
});

test('diff page: the function only tail spans run is marked, and tops the table', { skip }, async () => {
  const { page, errors } = await open(diffPage);
  assert.match((await page.textContent('#title')) ?? '', /tail vs normal: GET \/checkout \(SERVER\)/);
  const frames = await drawn(page);
  const burn = frames.find((d) => d.name === 'tail_only_burn');
  assert.equal(burn?.kind, 'new', 'tail_only_burn is marked as run by tail spans only');
  const common = frames.find((d) => d.name === 'common_work');
  assert.ok(common === undefined || common.kind !== 'new', 'common_work runs in normal spans too');
  const first = page.locator('#growth tbody tr').first();
  assert.match((await first.textContent()) ?? '', /tail_only_burn.*only in tail/);
  assert.equal(await first.getAttribute('class'), 'only-tail');
  await shot(page, 'diff');
  // A row click searches the frame in the graph.
  await first.click();
  assert.equal(await page.inputValue('#search'), 'tail_only_burn');
  assert.equal((await drawn(page)).find((d) => d.name === 'tail_only_burn')?.matched, true);
  await shot(page, 'diff-search');
  assert.deepEqual(errors, []);
  await page.close();
});
