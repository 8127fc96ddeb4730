/**
 * The pages as the service serves them (the real app over HTTP): the bundle's files with their
 * types, the shell for every other /ui/ path (client routing), the security headers on each, no
 * inline script in the shell, and every other unknown path still a 404.
 */
import test, { type ExecutionContext } from 'ava';
import { startApp, type RunningApp } from '../../../helpers/app.js';
import { buildUiBundle } from '../../../helpers/ui-bundle.js';

let app: RunningApp;

test.before(async () => {
  buildUiBundle();
  app = await startApp();
});
test.after.always(() => app.close());

function securityHeaders(t: ExecutionContext, res: Response): void {
  t.is(res.headers.get('content-security-policy'), "default-src 'self'");
  t.is(res.headers.get('x-content-type-options'), 'nosniff');
  t.is(res.headers.get('referrer-policy'), 'no-referrer');
}

test("every page path answers the shell, which loads only the service's own files", async (t) => {
  for (const path of ['/ui/', '/ui/builders', '/ui/builds/bld-123', '/ui/retention', '/ui/no/such/page']) {
    const res = await fetch(`${app.url}${path}`);
    t.is(res.status, 200, path);
    t.regex(res.headers.get('content-type') ?? '', /^text\/html/, path);
    securityHeaders(t, res);
    const html = await res.text();
    t.true(html.includes('<script type="module" src="/ui/app.js"></script>'), path);
    // No inline script: every script element has a src, and nothing runs from an attribute.
    t.deepEqual(html.match(/<script(?![^>]*\bsrc=)[^>]*>/g), null, path);
    t.notRegex(html, /\son[a-z]+=/i, path);
  }
});

test('the bundle is served with its types and the same headers', async (t) => {
  const js = await fetch(`${app.url}/ui/app.js`);
  t.is(js.status, 200);
  t.regex(js.headers.get('content-type') ?? '', /^text\/javascript/);
  securityHeaders(t, js);
  t.true((await js.text()).length > 1000);
  const css = await fetch(`${app.url}/ui/app.css`);
  t.is(css.status, 200);
  t.regex(css.headers.get('content-type') ?? '', /^text\/css/);
  securityHeaders(t, css);
});

test('/ui leads to /ui/; unknown paths outside /ui/ stay 404 with the error body', async (t) => {
  const bare = await fetch(`${app.url}/ui`, { redirect: 'manual' });
  t.is(bare.status, 302);
  t.is(bare.headers.get('location'), '/ui/');
  for (const path of ['/uix', '/no-such-path', '/builds/x/y', '/u/i/']) {
    const res = await fetch(`${app.url}${path}`);
    t.is(res.status, 404, path);
    t.deepEqual(await res.json(), { error: 'not found' }, path);
  }
  const post = await fetch(`${app.url}/ui/`, { method: 'POST' });
  t.is(post.status, 404);
});
