/**
 * The web pages in headless Chromium against the service on the real stack (git, the Dev
 * Containers CLI, BuildKit, a registry): a build started over HTTP shows on /ui/ without a reload,
 * its page follows its log while it runs (HTML in the log and in the branch name drawn as text,
 * no script of theirs run), and Cancel ends it as `failure` on the page and in the API. The
 * builder that ran them shows its cache use on /ui/builders.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import test from 'ava';
import type { Browser } from 'puppeteer-core';
import { httpsCreds, httpsRepo, stack, startBuildAppFor, uniqueName } from '../helpers/build-support.js';
import { click, inPage, launchBrowser, mainText, newPage, waitFor } from '../helpers/browser.js';
import { eventually } from '../helpers/eventually.js';
import { pushedRepo } from '../helpers/pushed-repo.js';
import { buildUiBundle } from '../helpers/ui-bundle.js';

const XSS_LINE = '<img src=x onerror=alert(1)>';
const BRANCH = `ui/<b>bold</b>-${randomBytes(2).toString('hex')}`;
/** What the RUN step prints (its command line, also in the log, holds `$((6 * 7))` instead). */
const STARTED = 'step started 42';

let browser: Browser;
test.before(async () => {
  buildUiBundle();
  browser = await launchBrowser();
});
test.after.always(() => browser?.close());

test('a build started over HTTP shows on /ui/ within 2 s, its log live as text, and Cancel fails it', async (t) => {
  const app = await startBuildAppFor(t);
  const repo = await pushedRepo('ui-live');
  t.teardown(() => repo.dispose());
  await repo.push('main', {
    '.devcontainer/devcontainer.json': JSON.stringify({ build: { dockerfile: 'Dockerfile' } }),
    '.devcontainer/Dockerfile': [
      `FROM ${stack.BASE_IMAGE_ANON}`,
      `RUN echo '${XSS_LINE}' && echo "step started $((6 * 7))" && sleep 120`,
      '',
    ].join('\n'),
  });
  await repo.push(BRANCH, { 'README.md': '# a branch with markup in its name\n' });

  const { page, watch } = await newPage(browser);
  await page.goto(`${app.url}/ui/`);
  await page.waitForSelector('.builds[aria-busy="false"]');

  const res = await fetch(`${app.url}/build`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', Prefer: 'respond-async' },
    body: JSON.stringify({
      repository: repo.url,
      branch: BRANCH,
      gitCredentials: httpsCreds(),
      image: { registry: stack.REGISTRY_ANON, name: uniqueName('ui-live') },
      buildOptions: { noCache: true },
    }),
  });
  t.is(res.status, 202);
  const { id } = (await res.json()) as { id: string };
  const asked = Date.now();
  await page.waitForSelector(`a[data-build="${id}"]`, { timeout: 20_000 });
  t.log(`listed ${Date.now() - asked} ms after the 202`);
  t.true((await mainText(page)).includes(BRANCH), 'the branch name is drawn as its characters');

  await click(page, `a[data-build="${id}"]`);
  await waitFor(page, `location.pathname === '/ui/builds/${id}'`);
  await waitFor(
    page,
    `[...document.querySelectorAll('pre.log')].some((log) => log.textContent.includes(${JSON.stringify(STARTED)}))`,
    240_000,
  );
  const record = (await (await fetch(`${app.url}/builds/${id}`)).json()) as { status?: string };
  t.is(record.status, undefined, 'the log showed while the build ran');

  const text = await mainText(page);
  t.true(text.includes(XSS_LINE), 'the log line shows as its characters');
  t.true(text.includes(BRANCH));
  t.is(
    await inPage<number>(page, `document.querySelectorAll('#app img, #app b').length`),
    0,
    'no markup of theirs',
  );

  await click(page, 'button[data-action="cancel"]');
  await page.waitForSelector('.build-head .badge.failure', { timeout: 60_000 });
  const ended = await eventually(
    async () => {
      const body = (await (await fetch(`${app.url}/builds/${id}`)).json()) as { status?: string };
      return body.status !== undefined && body;
    },
    { timeout: 30_000, what: 'the cancelled build finished' },
  );
  t.is(ended.status, 'failure');
  t.is(await page.$('button[data-action="cancel"]'), null, 'no Cancel once it ended');
  t.deepEqual(watch.dialogs, []);
  t.deepEqual(watch.errors, []);
});

test("a finished build's page shows its stages and BuildKit steps at 1280 and 390 px (the README's screenshot)", async (t) => {
  const app = await startBuildAppFor(t);
  const res = await fetch(`${app.url}/build`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      repository: httpsRepo('dockerfile'),
      gitCredentials: httpsCreds(),
      image: { registry: stack.REGISTRY_ANON, name: uniqueName('ui-page') },
    }),
  });
  t.is(res.status, 200);
  const [record] = (
    (await (await fetch(`${app.url}/builds`)).json()) as { builds: { id: string; totalSteps?: number }[] }
  ).builds;
  if (record === undefined) throw new Error('no build listed');
  t.true((record.totalSteps ?? 0) > 0, 'the record lists its steps');

  const { page, watch } = await newPage(browser);
  await page.goto(`${app.url}/ui/builds/${record.id}`);
  await page.waitForSelector('.build-head .badge.success');
  await waitFor(
    page,
    `[...document.querySelectorAll('pre.log')].some((log) => log.textContent.includes('exporting to image'))`,
  );
  const text = await mainText(page);
  t.regex(text, /Build steps: \d+\/\d+ cached \(\d+%\)/);
  for (const stage of ['clone', 'check out', 'build and push', 'record']) t.true(text.includes(stage), stage);
  await page.screenshot({
    path: join(import.meta.dirname, '..', '..', 'docs', 'ui-build.png'),
    fullPage: false,
  });

  await page.setViewport({ width: 390, height: 900 });
  t.true(
    await inPage<boolean>(page, 'document.documentElement.scrollWidth <= 390'),
    'nothing wider than 390 px',
  );
  await page.goto(`${app.url}/ui/`);
  await page.waitForSelector(`a[data-build="${record.id}"]`);
  t.true(await inPage<boolean>(page, 'document.documentElement.scrollWidth <= 390'), 'the list fits 390 px');
  t.deepEqual(watch.errors, []);
});

test('a second build after a change to one file shows the earlier steps cached and why it was rebuilt', async (t) => {
  const app = await startBuildAppFor(t, { build: { reuse: true } });
  const repo = await pushedRepo('ui-rebuilt');
  t.teardown(() => repo.dispose());
  const files = (note: string): Record<string, string> => ({
    '.devcontainer/devcontainer.json': JSON.stringify({
      build: { dockerfile: 'Dockerfile', context: 'ctx' },
    }),
    '.devcontainer/Dockerfile': `FROM ${stack.BASE_IMAGE_ANON}\nRUN echo ${randomBytes(4).toString('hex')} > /one\nCOPY note.txt /note.txt\n`,
    '.devcontainer/ctx/note.txt': note,
  });
  const body = JSON.stringify({
    repository: repo.url,
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name: uniqueName('ui-rebuilt') },
  });
  const build = async (): Promise<string> => {
    const res = await fetch(`${app.url}/build`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    t.is(res.status, 200, await res.clone().text());
    const [latest] = ((await (await fetch(`${app.url}/builds`)).json()) as { builds: { id: string }[] })
      .builds;
    return latest?.id ?? '';
  };
  const first = files('one\n');
  await repo.push('main', first);
  await build();
  await repo.push('main', { '.devcontainer/ctx/note.txt': 'two\n' });
  const id = await build();

  const record = (await (await fetch(`${app.url}/builds/${id}`)).json()) as {
    steps?: { name: string; cached: boolean }[];
    cachedSteps?: number;
    key?: { key: string; inputs: { name: string; digest: string }[] };
    rebuiltBecause?: { inputs: string[] };
  };
  const steps = record.steps ?? [];
  t.true(steps.find((step) => step.name.includes('RUN echo'))?.cached, 'the RUN before the change is cached');
  t.false(
    steps.find((step) => step.name.includes('COPY note.txt'))?.cached ?? true,
    'the COPY of the file ran',
  );
  t.true((record.cachedSteps ?? 0) >= 1);
  t.regex(record.key?.key ?? '', /^[0-9a-f]{64}$/);
  t.true((record.key?.inputs ?? []).some((input) => input.name === 'path .devcontainer'));
  t.deepEqual(
    (record.rebuiltBecause?.inputs ?? []).map((line) => line.split(':')[0]),
    ['path .devcontainer'],
  );

  const { page } = await newPage(browser);
  await page.goto(`${app.url}/ui/builds/${id}`);
  await page.waitForSelector('.rebuilt li');
  // The input's line with its values comes with the build's log, which follows the record.
  await waitFor(page, `document.getElementById('app').innerText.includes('path .devcontainer: ')`);
  const text = await mainText(page);
  t.true(text.includes('Rebuilt because'));
  t.true((await inPage<number>(page, `document.querySelectorAll('.badge.cached').length`)) >= 1);

  // The builder that ran both builds: its cache use as BuildKit reports it, on /ui/builders.
  await page.goto(`${app.url}/ui/builders`);
  await page.waitForSelector('.cache-use', { timeout: 60_000 });
  t.regex(
    await mainText(page),
    /Cache[\s\S]*\d+(\.\d)? (B|KiB|MiB|GiB) \(\d+(\.\d)? (B|KiB|MiB|GiB) reclaimable\)/,
  );
});
