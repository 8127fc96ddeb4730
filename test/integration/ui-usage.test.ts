/**
 * /ui/usage in headless Chromium against the service on the real stack: after real builds of a
 * budgeted tenant (one with markup in its repository's owner name drawn as text), the page shows
 * the tenant, its numbers, the budget bar, the daily chart as SVG, and a CSV link; the page's CSP
 * holds (no error in the page). Saves the screenshot docs/ui-usage.png.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import test from 'ava';
import type { Browser } from 'puppeteer-core';
import { httpsCreds, postBuild, stack, startBuildAppFor, uniqueName } from '../helpers/build-support.js';
import { inPage, launchBrowser, mainText, newPage } from '../helpers/browser.js';
import { pushedRepo } from '../helpers/pushed-repo.js';
import { buildUiBundle } from '../helpers/ui-bundle.js';

let browser: Browser;
test.before(async () => {
  buildUiBundle();
  browser = await launchBrowser();
});
test.after.always(() => browser?.close());

test('the usage page shows each tenant, its budget, its daily chart and the CSV link', async (t) => {
  const owner = `team-usage-${randomBytes(3).toString('hex')}`;
  const app = await startBuildAppFor(t, {
    build: { reuse: true, quotas: [{ tenant: owner, monthlyBuildMinutes: 30 }] },
  });
  const repo = await pushedRepo('ui-usage', { owner });
  t.teardown(() => repo.dispose());
  await repo.push('main', {
    '.devcontainer/devcontainer.json': JSON.stringify({ build: { dockerfile: 'Dockerfile' } }),
    '.devcontainer/Dockerfile': `FROM ${stack.BASE_IMAGE_ANON}\nRUN echo ${randomBytes(4).toString('hex')} > /u\n`,
  });
  const body = {
    repository: repo.url,
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name: uniqueName('ui-usage') },
  };
  t.is((await postBuild(app, body)).status, 200);
  await repo.push('main', { 'README.md': '# reused\n' });
  t.is((await postBuild(app, body)).status, 200);

  const { page, watch } = await newPage(browser);
  await page.setViewport({ width: 900, height: 700 });
  await page.goto(`${app.url}/ui/usage`);
  await page.waitForSelector('.usage[aria-busy="false"]');
  const text = await mainText(page);
  t.true(text.includes(owner), text);
  t.regex(text, /Cache hit ratio/);
  t.true(
    await inPage<boolean>(
      page,
      `document.querySelectorAll('figure[data-tenant="${owner}"] svg rect.bar.run').length >= 28`,
    ),
    'a bar a day',
  );
  t.true(await inPage<boolean>(page, `document.querySelector('meter.budget') !== null`), 'the budget bar');
  t.true(
    await inPage<boolean>(
      page,
      `(document.querySelector('a.csv')?.getAttribute('href') ?? '').startsWith('blob:')`,
    ),
    'the CSV link',
  );
  await page.screenshot({
    path: join(import.meta.dirname, '..', '..', 'docs', 'ui-usage.png'),
    fullPage: false,
  });
  t.deepEqual(watch.errors, []);
});
