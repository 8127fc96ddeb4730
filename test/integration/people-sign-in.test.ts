// Sign-in for people (docs/auth.md) on the real stack: the service as a process in Redis mode with
// identities enforced, a real OpenID Connect provider (oidc-provider, https with the test's own
// CA), headless Chromium. A member of team-a signs in from /ui/, sees team-a's builds and none of
// team-b's, cancels team-a's running build, is refused on others; each forged or replayed callback
// is refused, a session ends with its ID token, and no secret of the flow shows anywhere.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'puppeteer-core';
import { stack } from '../helpers/build-support.js';
import { click, inPage, launchBrowser, mainText, waitFor } from '../helpers/browser.js';
import { eventually } from '../helpers/eventually.js';
import { signInAtProvider, startProvider, type TestProvider } from '../helpers/oidc-provider.js';
import { dumpRedis } from '../helpers/redis-dump.js';
import { buildUiBundle } from '../helpers/ui-bundle.js';
import {
  finished,
  freePort,
  ownedRepo,
  settings,
  startBuild,
  startService,
  type Service,
} from '../helpers/sign-in-support.js';

const hex = (): string => randomBytes(4).toString('hex');
const CLIENT = 'ibs-pages';
const SHORT_CLIENT = 'ibs-short';
const OTHER_CLIENT = 'other-app';
const STARTED = 'step started 42';

interface Fixture {
  provider: TestProvider;
  browser: Browser;
  main: Service;
  short: Service;
  settingsDir: string;
  opsToken: string;
  clientSecret: string;
  owners: { a: string; b: string; shared: string };
  builds: { aRunning: string; aDone: string; bDone: string; sharedDone: string };
  repos: { remove: () => void }[];
  /** Session ids, CSRF tokens, sign-in cookies and codes met in the run: none may show anywhere. */
  seen: string[];
  /** What the pages showed. */
  pages: string[];
}

let fx: Fixture;

test.before(async () => {
  buildUiBundle();
  const [mainPort, shortPort] = [await freePort(), await freePort()];
  const clientSecret = `client-secret-${randomBytes(16).toString('hex')}`;
  const opsToken = `ops-${randomBytes(24).toString('hex')}`;
  const callback = (port: number): string => `http://127.0.0.1:${String(port)}/auth/callback`;
  const provider = await startProvider(
    [
      { clientId: CLIENT, secret: clientSecret, redirectUrl: callback(mainPort) },
      { clientId: OTHER_CLIENT, secret: `other-${hex()}`, redirectUrl: callback(mainPort) },
      { clientId: SHORT_CLIENT, redirectUrl: callback(shortPort), idTokenSeconds: 6 },
    ],
    { alice: ['team-a', 'staff'], bob: ['team-b'] },
  );
  const owners = { a: `team-a-${hex()}`, b: `team-b-${hex()}`, shared: `shared-${hex()}` };
  const dockerfile = `FROM ${stack.BASE_IMAGE_ANON}\nRUN echo "step started $((6 * 7))" && sleep 120\n`;
  const repos = [
    ownedRepo(owners.a, dockerfile),
    ownedRepo(owners.b, dockerfile),
    ownedRepo(owners.shared, dockerfile),
  ];
  const settingsDir = mkdtempSync(join(tmpdir(), 'ibs-sign-in-settings-'));
  const env = { NODE_EXTRA_CA_CERTS: provider.caFile };
  const main = await startService(
    settingsDir,
    'main',
    settings(provider.url, mainPort, CLIENT, owners, opsToken),
    mainPort,
    {
      ...env,
      AUTH_BROWSER_CLIENT_SECRET: clientSecret,
    },
  );
  const short = await startService(
    settingsDir,
    'short',
    settings(provider.url, shortPort, SHORT_CLIENT, owners, opsToken),
    shortPort,
    env,
  );
  const repoUrl = (owner: string): string => `${stack.GIT_HTTPS_URL}/${owner}/app.git`;
  const aRunning = await startBuild(main.url, opsToken, repoUrl(owners.a), 'main');
  const done = await Promise.all(
    [owners.a, owners.b, owners.shared].map((owner) =>
      startBuild(main.url, opsToken, repoUrl(owner), `no-such-branch-${hex()}`),
    ),
  );
  for (const id of done) await finished(main.url, opsToken, id);
  const [aDone = '', bDone = '', sharedDone = ''] = done;
  const browser = await launchBrowser([`--ignore-certificate-errors-spki-list=${provider.spki}`]);
  fx = {
    provider,
    browser,
    main,
    short,
    settingsDir,
    opsToken,
    clientSecret,
    owners,
    builds: { aRunning, aDone, bDone, sharedDone },
    repos,
    seen: [],
    pages: [],
  };
});

test.after.always(async () => {
  await fx?.browser.close();
  await Promise.all([fx?.main.process.lose(), fx?.short.process.lose()]);
  await fx?.provider.close();
  for (const repo of fx?.repos ?? []) repo.remove();
  if (fx !== undefined) rmSync(fx.settingsDir, { recursive: true, force: true });
});

/** The cookies the browser holds for the service, as a Cookie header; each value kept for the canary. */
async function cookieHeader(context: BrowserContext, url: string): Promise<string> {
  const cookies = (await context.cookies()).filter(
    (c) => url.includes(`//${c.domain}`) || c.domain === '127.0.0.1',
  );
  for (const c of cookies) if (c.name.startsWith('ibs_')) fx.seen.push(c.value);
  return cookies.map((c) => `${c.name}=${c.value}`).join('; ');
}

/** A call from the page itself (its cookies; the CSRF token when `csrf`). */
const fromPage = (page: Page, method: string, path: string, csrf = true) =>
  inPage<{ status: number; text: string }>(
    page,
    `(async () => {
      const token = document.cookie.split('; ').find((c) => c.startsWith('ibs_csrf='))?.slice(9);
      const headers = ${String(csrf)} && token ? { 'X-CSRF-Token': token } : {};
      const res = await fetch(${JSON.stringify(path)}, { method: ${JSON.stringify(method)}, headers });
      return { status: res.status, text: await res.text() };
    })()`,
  );

test.serial(
  'a member of team-a signs in from /ui/, sees and cancels only what the rules give, then signs out',
  async (t) => {
    const { main, provider, builds } = fx;
    const context = await fx.browser.createBrowserContext();
    t.teardown(() => context.close());
    const page = await context.newPage();
    await page.goto(`${main.url}/ui/`);
    await waitFor(page, `location.origin === ${JSON.stringify(provider.url)}`);
    await signInAtProvider(page, 'alice');
    await waitFor(page, `location.href === ${JSON.stringify(`${main.url}/ui/`)}`);
    await page.waitForSelector(`a[data-build="${builds.aRunning}"]`);
    await page.waitForSelector(`a[data-build="${builds.aDone}"]`);
    await page.waitForSelector(`a[data-build="${builds.sharedDone}"]`);
    t.is(await page.$(`a[data-build="${builds.bDone}"]`), null, "none of team-b's builds");
    t.false((await mainText(page)).includes(fx.owners.b));
    fx.pages.push(await page.content(), await mainText(page));
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'ibs_session');
    t.truthy(session);
    t.true(session?.httpOnly, 'the session cookie is HttpOnly');
    t.is(session?.sameSite, 'Lax');
    t.is(session?.path, '/');
    t.false(session?.secure, 'plain http on loopback: not Secure');
    t.is(
      await inPage<string | null>(page, `sessionStorage.getItem('ibs.token')`),
      null,
      'no token in the tab',
    );
    await cookieHeader(context, main.url);

    await page.goto(`${main.url}/ui/builds/${builds.aRunning}`);
    await waitFor(
      page,
      `[...document.querySelectorAll('pre.log')].some((log) => log.textContent.includes(${JSON.stringify(STARTED)}))`,
      240_000,
    );
    await click(page, 'button[data-action="cancel"]');
    await page.waitForSelector('.build-head .badge.failure', { timeout: 60_000 });
    fx.pages.push(await page.content(), await mainText(page));

    const shared = await fromPage(page, 'DELETE', `/builds/${builds.sharedDone}`);
    t.is(shared.status, 403, shared.text);
    t.regex(shared.text, /no access rule grants cancel/);
    // The audit trail names the person (their issuer entry and `sub`), never a token or the session;
    // the service's lines are read as they arrive, so the second decision may come a moment later.
    const cancels = () =>
      main.process
        .lines()
        .map(
          (line) =>
            line.audit as {
              decision?: string;
              action?: string;
              identity?: { subject?: string; name?: string };
            },
        )
        .filter((audit) => audit?.action === 'cancel' && audit.identity?.subject === 'alice');
    const audits = await eventually(() => (cancels().length >= 2 ? cancels() : undefined), {
      timeout: 10_000,
      what: () => JSON.stringify(cancels()),
    });
    t.deepEqual(
      audits.map((audit) => `${audit.decision ?? ''} ${audit.identity?.name ?? ''}`),
      ['allow people', 'deny people'],
    );
    const other = await fromPage(page, 'DELETE', `/builds/${builds.bDone}`);
    t.is(other.status, 403, "team-b's build is not the person's to cancel");
    t.regex(other.text, /no access rule grants cancel/);
    t.is((await fromPage(page, 'GET', `/builds/${builds.bDone}`)).status, 404);
    const list = await fromPage(page, 'GET', '/builds');
    t.true(list.text.includes(builds.aDone));
    t.false(list.text.includes(builds.bDone));

    // A cross-site page cannot read the CSRF cookie: its POST or DELETE carries the session alone.
    const header = await cookieHeader(context, main.url);
    const sessionOnly = header
      .split('; ')
      .filter((c) => c.startsWith('ibs_session='))
      .join('; ');
    for (const [method, path] of [
      ['DELETE', `/builds/${builds.aDone}`],
      ['POST', '/build'],
    ] as const) {
      const res = await fetch(`${main.url}${path}`, {
        method,
        headers: {
          cookie: sessionOnly,
          origin: 'https://elsewhere.example',
          'content-type': 'application/json',
        },
        body: method === 'POST' ? '{}' : null,
      });
      t.is(res.status, 403, `${method} ${path}`);
      t.regex(await res.text(), /X-CSRF-Token/);
    }
    const csrf =
      header
        .split('; ')
        .find((c) => c.startsWith('ibs_csrf='))
        ?.slice('ibs_csrf='.length) ?? '';
    const foreign = await fetch(`${main.url}/builds/${builds.aDone}`, {
      method: 'DELETE',
      headers: { cookie: header, 'x-csrf-token': csrf, origin: 'https://elsewhere.example' },
    });
    t.is(foreign.status, 403, 'another origin is refused even with the token');

    await page.goto(`${main.url}/ui/`);
    await page.waitForSelector('button[data-action="sign-out"]');
    await click(page, 'button[data-action="sign-out"]');
    await page.waitForSelector('form.sign-in a.sign-in-provider');
    const after = await fetch(`${main.url}/builds`, { headers: { cookie: header } });
    t.is(after.status, 401, 'the session ended with the sign-out');
    t.regex(await after.text(), /session has ended/);
    await page.reload();
    await page.waitForSelector('form.sign-in a.sign-in-provider');
    t.true(
      page.url().startsWith(main.url),
      'signed out on purpose: the pages ask, they do not send to the provider',
    );
    t.is(await inPage<number>(page, `document.querySelectorAll('a[data-build]').length`), 0);
  },
);

interface Callback {
  readonly url: URL;
  readonly cookie: string;
}

/**
 * A sign-in as `login` up to the provider's redirect to the callback, which is held back: its URL
 * and the browser's sign-in cookie. `rewrite` changes the authorization request on its way.
 */
async function heldCallback(login: string, rewrite?: (url: URL) => void): Promise<Callback> {
  const { main, provider } = fx;
  const context = await fx.browser.createBrowserContext();
  try {
    const page = await context.newPage();
    await page.setRequestInterception(true);
    let held: URL | undefined;
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.origin === main.url && url.pathname === '/auth/callback') {
        held = url;
        void request.abort();
      } else if (
        rewrite !== undefined &&
        url.origin === provider.url &&
        url.pathname === '/auth' &&
        url.searchParams.has('state')
      ) {
        rewrite(url);
        void request.continue({ url: url.href });
      } else void request.continue();
    });
    await page.goto(`${main.url}/auth/login?returnTo=/ui/`);
    await signInAtProvider(page, login).catch(() => undefined);
    const url = await eventually(() => held, { timeout: 30_000, what: 'the callback' });
    const cookie = (await context.cookies()).find((c) => c.name === 'ibs_sign_in')?.value ?? '';
    fx.seen.push(cookie, url.searchParams.get('code') ?? '');
    return { url, cookie };
  } finally {
    await context.close();
  }
}

const callback = (held: Callback, url: URL = held.url, cookie = `ibs_sign_in=${held.cookie}`) =>
  fetch(url, { headers: cookie === '' ? {} : { cookie }, redirect: 'manual' });

test.serial(
  'a forged state, a replayed code, a callback without its sign-in and a code of another client are refused',
  async (t) => {
    const held = await heldCallback('alice');
    const forged = new URL(held.url);
    forged.searchParams.set('state', 'forged-state');
    const refused = await callback(held, forged);
    t.is(refused.status, 400);
    t.regex(await refused.text(), /state is not the one of this sign-in/);
    t.is((await callback(held, held.url, '')).status, 400, 'no sign-in under way in this browser');

    const first = await callback(held);
    t.is(first.status, 302);
    t.is(first.headers.get('location'), '/ui/');
    const setCookies = first.headers.getSetCookie();
    t.true(
      setCookies.some((c) =>
        /^ibs_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=\d+; SameSite=Lax; HttpOnly$/.test(c),
      ),
    );
    for (const c of setCookies) fx.seen.push(c.split(';')[0]?.split('=')[1] ?? '');
    const replayed = await callback(held);
    t.is(replayed.status, 400);
    t.regex(await replayed.text(), /refused the code/);

    const ofOther = await heldCallback('alice', (url) => url.searchParams.set('client_id', OTHER_CLIENT));
    const other = await callback(ofOther);
    t.is(other.status, 400);
    t.regex(await other.text(), /sign-in is refused/);
    t.false(other.headers.getSetCookie().some((c) => c.startsWith('ibs_session=')));
  },
);

test.serial('an ID token with another nonce is refused', async (t) => {
  const held = await heldCallback('alice', (url) => url.searchParams.set('nonce', `other-${hex()}`));
  const res = await callback(held);
  t.is(res.status, 400);
  t.regex(await res.text(), /another nonce/);
  t.false(res.headers.getSetCookie().some((c) => c.startsWith('ibs_session=')));
});

test.serial(
  'a session ends with its ID token: then the pages send the person to the provider again',
  async (t) => {
    const { short, provider } = fx;
    const context = await fx.browser.createBrowserContext();
    t.teardown(() => context.close());
    const page = await context.newPage();
    await page.goto(`${short.url}/ui/`);
    await waitFor(page, `location.origin === ${JSON.stringify(provider.url)}`);
    await signInAtProvider(page, 'alice');
    await page.waitForSelector(`a[data-build="${fx.builds.aDone}"]`);
    const header = await cookieHeader(context, short.url);
    const ended = await eventually(
      async () => {
        const res = await fetch(`${short.url}/builds`, { headers: { cookie: header } });
        return res.status === 401 && res;
      },
      { timeout: 20_000, what: 'the session ended' },
    );
    t.regex(await ended.text(), /session has ended/);
    // The provider still knows the person (its own session): it answers at once, and a new session starts.
    const toProvider: string[] = [];
    page.on('request', (request) => {
      if (request.isNavigationRequest() && request.url().startsWith(`${provider.url}/auth?`))
        toProvider.push(request.url());
    });
    await page.goto(`${short.url}/ui/`);
    await eventually(() => toProvider.length > 0, { timeout: 20_000, what: 'the page sent to the provider' });
    await page.waitForSelector(`a[data-build="${fx.builds.aDone}"]`);
    t.is(toProvider.length, 1);
  },
);

test.serial(
  'no session id, code, token or client secret shows in a log line, record, Redis value, metric or page',
  async (t) => {
    const secrets = [fx.clientSecret, fx.opsToken, ...fx.provider.issued, ...fx.seen].filter(
      (s) => s.length >= 16,
    );
    t.true(fx.provider.issued.length >= 6, 'codes, access tokens and ID tokens were issued');
    t.true(fx.seen.length >= 6);
    const ops = { Authorization: `Bearer ${fx.opsToken}` };
    const records = await (await fetch(`${fx.main.url}/builds`, { headers: ops })).text();
    const places: Record<string, string> = {
      'main service output': fx.main.process.stdout() + fx.main.process.stderr(),
      'short service output': fx.short.process.stdout() + fx.short.process.stderr(),
      records,
      metrics: await (await fetch(`${fx.main.url}/metrics`)).text(),
      config: await (await fetch(`${fx.main.url}/config`, { headers: ops })).text(),
      redis: await dumpRedis(stack.STACK_REDIS_URL),
      pages: fx.pages.join('\n'),
    };
    t.true(places['main service output']?.includes('a person signed in'));
    t.true(records.includes(fx.builds.aRunning));
    for (const [where, text] of Object.entries(places))
      for (const secret of secrets) t.false(text.includes(secret), `${where} holds a secret`);
  },
);
