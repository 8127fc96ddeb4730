/**
 * /ui/ kept live by the change feed, in headless Chromium against the service on port 0 (its
 * embedded registry filled directly): the first page drawn, a new build shown on top, a running
 * one moving on and finishing in place, "More" reading the next page, and no list asked again
 * while it stays live (the requests are counted), under the pages' Content-Security-Policy.
 */
import test from 'ava';
import type { Browser, HTTPRequest } from 'puppeteer-core';
import { startApp } from '../helpers/app.js';
import { click, inPage, launchBrowser, newPage, waitFor } from '../helpers/browser.js';
import { buildUiBundle } from '../helpers/ui-bundle.js';

let browser: Browser;
test.before(async () => {
  buildUiBundle();
  browser = await launchBrowser();
});
test.after.always(() => browser?.close());

const rowCount = `document.querySelectorAll('a[data-build]').length`;

test('the list is live through the feed: new, moving and finished builds, More, no list polled', async (t) => {
  const app = await startApp({ build: { history: 1000 } });
  t.teardown(app.close);
  const build = (n: number) => ({
    requestId: `feed-${n}`,
    repository: `https://git.example.com/team/app-${n % 4}.git`,
    branch: 'main',
    image: 'registry.example.com/team/app',
  });
  const ids: string[] = [];
  for (let n = 0; n < 80; n++) {
    ids.push(await app.ctx.builds.start(build(n)));
    if (n < 70) await app.ctx.builds.finish(ids[n] as string, { status: 'success', durationSeconds: 5 });
  }
  const { page, watch } = await newPage(browser);
  const lists: string[] = [];
  page.on('request', (request: HTTPRequest) => {
    const url = new URL(request.url());
    if (url.pathname === '/builds') lists.push(url.search);
  });
  await page.goto(`${app.url}/ui/`);
  await waitFor(page, `${rowCount} === 50`);
  t.deepEqual(lists, ['?limit=50'], 'the first page only');

  // A new build shows on top, a running one moves on and finishes in place.
  const fresh = await app.ctx.builds.start(build(100));
  await page.waitForSelector(`a[data-build="${fresh}"]`, { timeout: 20_000 });
  t.is(await page.evaluate(`document.querySelector('a[data-build]').dataset.build`), fresh);
  // Builds started within one millisecond are ordered by id: take a running one the page shows.
  const shown = await inPage<string[]>(
    page,
    `[...document.querySelectorAll('table a[data-build]')].map((a) => a.dataset.build)`,
  );
  const moving = ids.slice(70).find((id) => shown.includes(id));
  if (moving === undefined) return t.fail('no running build on the first page');
  await app.ctx.builds.update(moving, { phase: 'building' });
  const badge = `document.querySelector('a[data-build="${moving}"]').closest('tr').querySelector('.badge').textContent`;
  await waitFor(page, `${badge} === 'building'`, 20_000);
  await app.ctx.builds.finish(moving, { status: 'failure', durationSeconds: 3, error: 'boom' });
  await waitFor(page, `${badge} === 'failure'`, 20_000);

  // More: the next page, once.
  await click(page, 'button.more');
  await waitFor(page, `${rowCount} === 81`);
  t.false(
    await page.evaluate(`document.querySelector('button.more').hidden === false`),
    'no page after the last',
  );
  t.is(lists.length, 2);
  t.true((lists[1] ?? '').includes('after='));
  // A while later, still no list asked again: the feed keeps it live.
  const before = lists.length;
  await app.ctx.builds.update(ids[79] as string, { phase: 'resolving' });
  const other = `document.querySelector('a[data-build="${ids[79]}"]').closest('tr').querySelector('.badge').textContent`;
  await waitFor(page, `${other} === 'resolving'`, 20_000);
  t.is(lists.length, before, 'no list read for a change');
  t.deepEqual(watch.violations, []);
  t.deepEqual(watch.errors, []);
});

test("filters are the service's: the address holds them and a page lists only their builds", async (t) => {
  const app = await startApp({ build: { history: 1000 } });
  t.teardown(app.close);
  const repository = 'https://git.example.com/team/picked.git';
  for (let n = 0; n < 60; n++)
    await app.ctx.builds.start({
      requestId: `f-${n}`,
      repository: n % 10 === 0 ? repository : 'https://git.example.com/team/other.git',
      image: 'r.example/x',
    });
  const { page } = await newPage(browser);
  await page.goto(`${app.url}/ui/?repository=${encodeURIComponent(repository)}`);
  await waitFor(page, `${rowCount} === 6`);
  const fresh = await app.ctx.builds.start({ requestId: 'f-new', repository, image: 'r.example/x' });
  await page.waitForSelector(`a[data-build="${fresh}"]`, { timeout: 20_000 });
  await app.ctx.builds.start({
    requestId: 'f-other',
    repository: 'https://git.example.com/team/other.git',
    image: 'r.example/x',
  });
  const shown = await app.ctx.builds.start({ requestId: 'f-last', repository, image: 'r.example/x' });
  await page.waitForSelector(`a[data-build="${shown}"]`, { timeout: 20_000 });
  t.is(await page.evaluate(rowCount), 8, "the other repository's build is not shown");
  // A tenant the queue named (not the repository's owner) is a filter of its own.
  for (let n = 0; n < 3; n++)
    await app.ctx.builds.start({ requestId: `p-${n}`, repository, image: 'r.example/x', tenant: 'platform' });
  await page.goto(`${app.url}/ui/?tenant=platform`);
  await waitFor(page, `${rowCount} === 3`);
  t.is(await page.evaluate(`document.querySelector('input[name="tenant"]').value`), 'platform');
});
