/**
 * The builds list on a phone-sized screen (390 CSS pixels) in headless Chromium, against the
 * service on the real stack: one card per build with its id shortened, status, repository, branch
 * and age; the page never scrolls sideways, long names included. At 1,280 pixels the table shows
 * and the cards do not.
 */
import { randomBytes } from 'node:crypto';
import test from 'ava';
import type { Browser } from 'puppeteer-core';
import { httpsCreds, postBuild, stack, startBuildAppFor, uniqueName } from '../helpers/build-support.js';
import { click, inPage, launchBrowser, newPage, waitFor } from '../helpers/browser.js';
import { pushedRepo } from '../helpers/pushed-repo.js';
import { listBuilds } from '../helpers/replicas.js';
import { buildUiBundle } from '../helpers/ui-bundle.js';

const BRANCH = `feature/a-branch-name-far-too-long-for-a-phone-screen-${randomBytes(3).toString('hex')}`;

let browser: Browser;
test.before(async () => {
  buildUiBundle();
  browser = await launchBrowser();
});
test.after.always(() => browser?.close());

interface Card {
  readonly id: string;
  readonly title: string;
  readonly status: string;
  readonly repo: string;
  readonly branch: string;
  readonly age: string;
}

const CARDS = `[...document.querySelectorAll('.build-card')].map((card) => ({
  id: card.querySelector('a[data-card]').innerText,
  title: card.querySelector('a[data-card]').title,
  status: card.querySelector('.badge').innerText,
  repo: card.querySelector('.repo').innerText,
  branch: card.querySelector('.branch')?.innerText ?? '',
  age: card.querySelector('.age').innerText,
}))`;

test('at 390 px the builds list is one card per build and the page never scrolls sideways', async (t) => {
  const app = await startBuildAppFor(t);
  const repo = await pushedRepo('ui-narrow-with-a-long-repository-name');
  t.teardown(() => repo.dispose());
  await repo.push(BRANCH, {
    '.devcontainer/devcontainer.json': JSON.stringify({ image: stack.BASE_IMAGE_ANON }),
  });
  const res = await postBuild(app, {
    repository: repo.url,
    branch: BRANCH,
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name: uniqueName('ui-narrow') },
  });
  t.is(res.status, 200, JSON.stringify(res.body));
  const [build] = await listBuilds(app, '');
  if (build === undefined) throw new Error('no build listed');

  const { page, watch } = await newPage(browser, 390);
  await page.goto(`${app.url}/ui/`);
  await page.waitForSelector(`a[data-card="${build.id}"]`, { visible: true });
  const cards = await inPage<Card[]>(page, CARDS);
  t.is(cards.length, 1);
  t.deepEqual(
    { ...cards[0], age: undefined },
    {
      id: build.id.slice(0, 'bld-'.length + 8),
      title: build.id,
      status: 'success',
      repo: repo.url,
      branch: BRANCH,
      age: undefined,
    },
  );
  t.regex(cards[0]?.age ?? '', /^\d+ (s|min) ago$/);
  t.true(await inPage<boolean>(page, 'document.documentElement.scrollWidth <= 390'), 'no sideways scroll');
  t.false(await inPage<boolean>(page, `document.querySelector('.builds .table-wrap').checkVisibility()`));

  await click(page, `a[data-card="${build.id}"]`);
  await waitFor(page, `location.pathname === '/ui/builds/${build.id}'`);
  await page.waitForSelector('.build-head .badge.success');
  t.true(await inPage<boolean>(page, 'document.documentElement.scrollWidth <= 390'), "the build's page fits");

  await page.setViewport({ width: 1280, height: 900 });
  await page.goto(`${app.url}/ui/`);
  await page.waitForSelector(`a[data-build="${build.id}"]`, { visible: true });
  t.false(await inPage<boolean>(page, `document.querySelector('.build-cards').checkVisibility()`));
  t.deepEqual(watch.errors, []);
});
