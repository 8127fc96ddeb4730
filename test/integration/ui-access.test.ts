/**
 * The web pages with identities enforced (docs/auth.md), in headless Chromium against the service
 * on the real stack: without a token a page shows the sign-in prompt and nothing else; with a
 * team's token it lists that team's builds and none of another team's, whose page it cannot open.
 * And a build log's ANSI colours drawn as colours, its escape codes never shown.
 */
import { createHash, randomBytes } from 'node:crypto';
import test from 'ava';
import type { Browser } from 'puppeteer-core';
import type { AuthRule } from '../../src/config/types.js';
import { httpsCreds, httpsRepo, stack, startBuildAppFor, uniqueName } from '../helpers/build-support.js';
import { click, inPage, launchBrowser, mainText, newPage, waitFor } from '../helpers/browser.js';
import { postAsync, untilFinished } from '../helpers/replicas.js';
import { buildUiBundle } from '../helpers/ui-bundle.js';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const tokenA = `team-a-${randomBytes(12).toString('hex')}`;
const tokenB = `team-b-${randomBytes(12).toString('hex')}`;

const rule = (team: string, path: string): AuthRule => ({
  name: team,
  token: team,
  actions: ['build', 'read', 'cancel'],
  repositories: [{ host: '*', path }],
  images: [{ registry: '*', name: '**' }],
});

let browser: Browser;
test.before(async () => {
  buildUiBundle();
  browser = await launchBrowser();
});
test.after.always(() => browser?.close());

/** A build of `repository` by `token` that ends quickly (no such branch), finished. */
async function finishedBuild(url: string, token: string, repository: string): Promise<string> {
  const headers = { Authorization: `Bearer ${token}` };
  const body = { branch: `no-such-branch-${randomBytes(3).toString('hex')}`, gitCredentials: httpsCreds() };
  const image = { registry: stack.REGISTRY_ANON, name: uniqueName('ui-access') };
  const { id } = await postAsync({ url }, repository, image, { body, headers });
  await untilFinished({ url }, [id], headers);
  return id;
}

test('a page asks for a token and shows nothing else; a team sees only its own builds', async (t) => {
  const app = await startBuildAppFor(t, {
    auth: {
      mode: 'enforce',
      issuers: [],
      tokens: [
        { name: 'team-a', sha256: sha256(tokenA) },
        { name: 'team-b', sha256: sha256(tokenB) },
      ],
      rules: [rule('team-a', 'image'), rule('team-b', 'dockerfile')],
    },
  });
  const ofA = await finishedBuild(app.url, tokenA, httpsRepo('image'));
  const ofB = await finishedBuild(app.url, tokenB, httpsRepo('dockerfile'));

  const { page, watch } = await newPage(browser, 390);
  for (const path of [`/ui/builds/${ofA}`, '/ui/builders', '/ui/']) {
    await page.goto(`${app.url}${path}`);
    await page.waitForSelector('form.sign-in input[type="password"]');
    t.is(await inPage<number>(page, `document.querySelectorAll('nav a, table, pre').length`), 0, path);
    t.false((await mainText(page)).includes(ofA), path);
  }

  await page.type('form.sign-in input[type="password"]', tokenA);
  await click(page, 'form.sign-in button[type="submit"]');
  await page.waitForSelector(`a[data-build="${ofA}"]`);
  t.is(await page.$(`a[data-build="${ofB}"]`), null, "no build of the other team's listed");
  t.false((await mainText(page)).includes('dockerfile.git'));
  t.is(await inPage<string | null>(page, `sessionStorage.getItem('ibs.token')`), tokenA);

  await page.goto(`${app.url}/ui/builds/${ofB}`);
  await waitFor(page, `document.getElementById('app').innerText.includes('No build')`);
  t.false((await mainText(page)).includes('dockerfile.git'), "the other team's build is not shown");

  await page.goto(`${app.url}/ui/builds/${ofA}`);
  await page.waitForSelector('.build-head .badge.failure');
  await waitFor(page, `document.querySelectorAll('pre.log .line').length > 0`);

  await click(page, 'button[data-action="sign-out"]');
  await page.waitForSelector('form.sign-in');
  t.is(await inPage<string | null>(page, `sessionStorage.getItem('ibs.token')`), null);
  t.deepEqual(watch.errors, []);
});

test('a log with ANSI colours shows them as colours and never as escape codes', async (t) => {
  const app = await startBuildAppFor(t);
  const log = await app.ctx.logStore.open('img');
  log.write('plain \x1b[31mred\x1b[0m \x1b[1;32mbold green\x1b[0m <b>not bold</b>\n\x1b[2Kerased line\n');
  await log.close();
  const id = await app.ctx.builds.start({
    requestId: 'ui-ansi',
    repository: httpsRepo('image'),
    image: 'x/y',
  });
  await app.ctx.builds.update(id, { imageBuildLogId: log.id });

  const { page } = await newPage(browser);
  await page.goto(`${app.url}/ui/builds/${id}`);
  await waitFor(page, `document.querySelector('pre.log')?.textContent.includes('erased line')`);
  const spans = await inPage<string[]>(
    page,
    `[...document.querySelectorAll('pre.log .line span')].map((s) => s.className + ':' + s.textContent)`,
  );
  t.deepEqual(spans, ['fg-1:red', 'fg-2 bold:bold green']);
  const text = await mainText(page);
  t.true(text.includes('plain red bold green <b>not bold</b>'));
  t.true(text.includes('erased line'));
  t.false(text.includes('\u001b'));
  t.false(text.includes('[31m'));
  t.is(await inPage<number>(page, `document.querySelectorAll('#app b').length`), 0);
});
