// What the web pages cost a reader (`npm run bench:ui`; no stack needed: headless Chromium and the
// in-process service, its memory build registry filled directly with 5,000 finished builds).
// In one run:
//   - the bundle's size, raw and gzip (app.js and app.css as served from dist/ui);
//   - from navigation to the list drawn (/ui/, its first page of 50 rows), median of 10;
//   - the list kept live for 10 s while a build changes every 250 ms: the requests the page made
//     (lists of GET /builds, records of GET /builds/{id}, feeds of GET /builds/events);
//   - from navigation to a build's page drawn (its record and a 2,000-line build log), median of 10.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { startApp } from '../test/helpers/app.js';
import type { HTTPRequest, Page } from 'puppeteer-core';
import { launchBrowser, newPage } from '../test/helpers/browser.js';
import { buildUiBundle } from '../test/helpers/ui-bundle.js';
import { finishedBuild } from './finished-build.js';

const BUILDS = 5000;
const PAGE = 50;
const LIVE_MS = 10_000;
const RUNS = 10;
const LOG_LINES = 2000;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB`;

const dir = buildUiBundle();
const files = ['app.js', 'app.css'].map((name) => readFileSync(join(dir, name)));
const raw = files.reduce((sum, file) => sum + file.length, 0);
const gzip = files.reduce((sum, file) => sum + gzipSync(file, { level: 9 }).length, 0);

const app = await startApp({ build: { history: BUILDS } });
for (let i = 0; i < BUILDS - 1; i += 1) await finishedBuild(app.ctx.builds, i);
const log = await app.ctx.logStore.open('img');
for (let i = 0; i < LOG_LINES; i += 1)
  log.write(`#${i % 40} ${(i / 10).toFixed(3)} \x1b[32mstep output line ${i}\x1b[0m\n`);
await log.close();
// A finished build's record cannot change any more: this one's log is attached before it ends.
const withLog = await app.ctx.builds.start({
  requestId: 'bench-log',
  repository: 'https://git.example.com/a.git',
  image: 'r/a',
});
await app.ctx.builds.update(withLog, { imageBuildLogId: log.id });
await app.ctx.builds.finish(withLog, { status: 'success', durationSeconds: 42, image: 'r/a:1' });

/** /ui/ open while one build changes every 250 ms: the requests the page makes meanwhile. */
async function stayLive(page: Page) {
  await page.goto(`${app.url}/ui/`, { waitUntil: 'domcontentloaded' });
  await page.waitForFunction(`document.querySelectorAll('a[data-build]').length === ${PAGE}`);
  const counts = { lists: 0, records: 0, feeds: 0, changes: 0 };
  const count = (request: HTTPRequest): void => {
    const path = new URL(request.url()).pathname;
    if (path === '/builds') counts.lists += 1;
    else if (path === '/builds/events') counts.feeds += 1;
    else if (path.startsWith('/builds/')) counts.records += 1;
  };
  page.on('request', count);
  const id = await app.ctx.builds.start({
    requestId: 'bench-live',
    repository: 'https://git.example.com/live.git',
    image: 'r/live',
  });
  const phases = ['cloning', 'resolving', 'building'] as const;
  const until = performance.now() + LIVE_MS;
  while (performance.now() < until) {
    await app.ctx.builds.update(id, {
      phase: phases[counts.changes % phases.length] as (typeof phases)[number],
    });
    counts.changes += 1;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await app.ctx.builds.finish(id, { status: 'success', durationSeconds: LIVE_MS / 1000 });
  await page.waitForFunction(
    `document.querySelector('a[data-build="${id}"]')?.closest('tr')?.querySelector('.badge')?.textContent === 'success'`,
  );
  page.off('request', count);
  return counts;
}

const browser = await launchBrowser();
try {
  const { page } = await newPage(browser);
  const list: number[] = [];
  const build: number[] = [];
  for (let run = 0; run < RUNS; run += 1) {
    let started = performance.now();
    await page.goto(`${app.url}/ui/`, { waitUntil: 'domcontentloaded' });
    await page.waitForFunction(`document.querySelectorAll('a[data-build]').length === ${PAGE}`, {
      polling: 'mutation',
    });
    list.push(performance.now() - started);
    started = performance.now();
    await page.goto(`${app.url}/ui/builds/${withLog}`, { waitUntil: 'domcontentloaded' });
    await page.waitForFunction(
      `document.querySelector('.build-head .badge') !== null && (document.querySelector('pre.log')?.textContent.includes('line ${LOG_LINES - 1}') ?? false)`,
      { polling: 'mutation' },
    );
    build.push(performance.now() - started);
  }
  const live = await stayLive(page);
  console.log(`bundle: ${kib(raw)} raw, ${kib(gzip)} gzip (app.js + app.css)`);
  console.log(
    `/ui/ with ${BUILDS} builds kept: navigation to its first page (${PAGE} rows) drawn, median of ${RUNS}: ${median(list).toFixed(0)} ms`,
  );
  console.log(
    `/ui/ live for ${LIVE_MS / 1000} s, a build changing every 250 ms (${live.changes} changes, then its finish drawn): ` +
      `${live.lists} list requests, ${live.records} record requests, ${live.feeds} feed requests`,
  );
  console.log(
    `/ui/builds/<id> with a ${LOG_LINES}-line log: navigation to page drawn, median of ${RUNS}: ${median(build).toFixed(0)} ms`,
  );
} finally {
  await browser.close();
  await app.close();
}
