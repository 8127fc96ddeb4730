/**
 * "Rebuilt because" on a build's page in headless Chromium, against the service on the real stack
 * (git, the Dev Containers CLI, BuildKit, a registry): after `app.txt` changed and `old.txt` was
 * removed the page names both files with what happened to each (and saves the screenshot
 * docs/ui-why-rebuilt.png); a file whose name is markup is drawn as its characters.
 */
import { join } from 'node:path';
import test from 'ava';
import type { Browser, Page } from 'puppeteer-core';
import { httpsCreds, stack, startBuildAppFor, uniqueName } from '../helpers/build-support.js';
import { inPage, launchBrowser, newPage } from '../helpers/browser.js';
import { builtRecord } from '../helpers/built-record.js';
import { testRepo } from '../helpers/reuse-support.js';
import { buildUiBundle } from '../helpers/ui-bundle.js';

const MARKUP = '<img src=x onerror=alert(1)>.md';

let browser: Browser;
test.before(async () => {
  buildUiBundle();
  browser = await launchBrowser();
});
test.after.always(() => browser?.close());

/** The changed files the page lists: `<change> <path>` each. */
async function listedFiles(page: Page): Promise<string[]> {
  await page.waitForSelector('.rebuilt .changed-files li');
  return inPage<string[]>(
    page,
    `[...document.querySelectorAll('.rebuilt .changed-files li')].map((li) => li.innerText.replace(/\\s+/g, ' ').trim())`,
  );
}

test("a build's page names the files that made it run, as text", async (t) => {
  const app = await startBuildAppFor(t, { build: { reuse: true } });
  const repo = await testRepo('ui-rebuilt');
  t.teardown(repo.dispose);
  await repo.commit({
    '.devcontainer/devcontainer.json': JSON.stringify({ build: { dockerfile: 'Dockerfile', context: '..' } }),
    '.devcontainer/Dockerfile': `FROM ${stack.BASE_IMAGE_ANON}\nCOPY app.txt /app.txt\n`,
    'app.txt': 'one\n',
    'old.txt': 'old\n',
    'src/main.txt': 'main\n',
  });
  const body = {
    repository: repo.url,
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name: uniqueName('ui-rebuilt') },
  };
  await builtRecord(t, app, body);
  await repo.commit({ 'app.txt': 'two\n', 'old.txt': null });
  const id = (await builtRecord(t, app, body)).id;

  const { page, watch } = await newPage(browser);
  await page.goto(`${app.url}/ui/builds/${id}`);
  t.deepEqual(await listedFiles(page), ['changed app.txt', 'removed old.txt']);
  const panel = await page.$('section[aria-label="Build key"]');
  t.truthy(panel);
  t.regex(
    await inPage<string>(page, `document.querySelector('section[aria-label="Build key"]').innerText`),
    /Rebuilt because\s+path \/ [0-9a-f]{12} → [0-9a-f]{12}/,
  );
  await panel?.screenshot({ path: join(import.meta.dirname, '..', '..', 'docs', 'ui-why-rebuilt.png') });

  await repo.commit({ [MARKUP]: 'markup in a file name\n' });
  const next = (await builtRecord(t, app, body)).id;
  await page.goto(`${app.url}/ui/builds/${next}`);
  t.deepEqual(await listedFiles(page), [`added ${MARKUP}`]);
  t.is(await inPage<number>(page, `document.querySelectorAll('#app img').length`), 0, 'no markup of theirs');
  t.deepEqual(watch.dialogs, []);
  t.deepEqual(watch.errors, []);
});
