// People's sign-in (docs/auth.md) over a provider of the test's own (small fakes: its authorization
// URL and its code exchange) and the service's real ID token validation: the state bound to the
// browser's seed, the nonce, the audience (the client id), the session's end, and where a person
// comes back to.
import test from 'ava';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { IdTokens } from '../../../../src/auth/id-tokens.js';
import { PeopleSignIn, safeReturnTo } from '../../../../src/auth/people.js';
import type { SignInChecks } from '../../../../src/auth/provider-client.js';
import { createMemorySessions } from '../../../../src/auth/sessions.js';

const ISSUER = { name: 'people', issuer: 'https://sso.example', audience: 'ibs-api' };
const CLIENT = 'ibs-pages';

async function fixture(options: { claims?: (checks: SignInChecks) => JWTPayload; hours?: number } = {}) {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256' };
  const documents: Record<string, unknown> = {
    'https://sso.example/.well-known/openid-configuration': {
      issuer: ISSUER.issuer,
      jwks_uri: 'https://sso.example/jwks',
    },
    'https://sso.example/jwks': { keys: [jwk] },
  };
  const fetcher = ((url: string) =>
    Promise.resolve(
      new Response(JSON.stringify(documents[url]), { status: 200 }),
    )) as unknown as typeof fetch;
  const idTokens = new IdTokens([ISSUER], () => ({
    fetch: fetcher,
    now: Date.now,
    fetched: () => undefined,
  }));
  const now = Math.floor(Date.now() / 1000);
  const sign = (claims: JWTPayload): Promise<string> =>
    new SignJWT({ iss: ISSUER.issuer, aud: CLIENT, sub: 'alice', iat: now, exp: now + 600, ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .sign(privateKey);
  let asked: SignInChecks | undefined;
  const people = new PeopleSignIn(
    { issuer: ISSUER, clientId: CLIENT, sessionHours: options.hours ?? 8 },
    {
      store: createMemorySessions(),
      provider: {
        authorizationUrl: (checks) => {
          asked = checks;
          return Promise.resolve(`https://sso.example/auth?state=${checks.state}`);
        },
        exchange: (_query, checks) =>
          sign(
            options.claims?.(checks) ?? { nonce: checks.nonce, groups: ['team-a'], email: 'a@example.com' },
          ),
      },
      verify: (token, audience) => idTokens.verify(token, audience),
    },
  );
  const begin = async (returnTo?: string) => {
    const start = await people.begin(returnTo);
    return { ...start, state: asked?.state ?? '' };
  };
  return { people, begin };
}

const query = (state: string): URLSearchParams => new URLSearchParams({ code: 'c0de', state });

test('a sign-in with its own state and nonce starts a session of the person', async (t) => {
  const { people, begin } = await fixture();
  const start = await begin('/ui/builds/bld-1');
  t.regex(start.location, /^https:\/\/sso\.example\/auth\?state=/);
  const started = await people.finish(query(start.state), start.cookie);
  t.is(started.returnTo, '/ui/builds/bld-1');
  t.deepEqual(started.session.claims.groups, ['team-a']);
  t.is(started.session.claims.nonce, undefined, 'no nonce kept');
  t.is(started.session.claims.aud, undefined);
  const session = await people.session(started.sessionId);
  t.is(session?.subject, 'alice');
  t.true(await people.csrfHolds(started.sessionId, started.csrfToken));
  t.false(await people.csrfHolds(started.sessionId, `${started.csrfToken}x`));
  t.false(await people.csrfHolds(started.sessionId, undefined));
  await people.end(started.sessionId);
  t.is(await people.session(started.sessionId), undefined);
});

test("another state, no sign-in cookie, or another sign-in's cookie is refused", async (t) => {
  const { people, begin } = await fixture();
  const start = await begin();
  const other = await begin();
  await t.throwsAsync(people.finish(query('forged'), start.cookie), { message: /state is not the one/ });
  await t.throwsAsync(people.finish(query(start.state), undefined), { message: /no sign-in under way/ });
  await t.throwsAsync(people.finish(query(start.state), other.cookie), { message: /state is not the one/ });
});

test('an ID token for another client, with another nonce, or expired is refused', async (t) => {
  const cases: [string, (checks: SignInChecks) => JWTPayload, RegExp][] = [
    ['another client', (c) => ({ nonce: c.nonce, aud: 'other-app' }), /for another client/],
    ['another nonce', () => ({ nonce: 'other' }), /another nonce/],
    ['no nonce', () => ({}), /another nonce/],
    ['expired', (c) => ({ nonce: c.nonce, exp: Math.floor(Date.now() / 1000) - 3600 }), /expired/],
  ];
  for (const [what, claims, message] of cases) {
    const { people, begin } = await fixture({ claims });
    const start = await begin();
    await t.throwsAsync(people.finish(query(start.state), start.cookie), { message }, what);
  }
});

test("a session ends at the ID token's expiry or after the hours, whichever is first", async (t) => {
  const soon = Math.floor(Date.now() / 1000) + 120;
  const short = await fixture({ claims: (c) => ({ nonce: c.nonce, exp: soon }) });
  const a = await short.begin();
  t.is((await short.people.finish(query(a.state), a.cookie)).endsAt, soon * 1000);
  const long = await fixture({ claims: (c) => ({ nonce: c.nonce, exp: soon + 7200 }), hours: 1 });
  const b = await long.begin();
  const endsAt = (await long.people.finish(query(b.state), b.cookie)).endsAt;
  t.true(Math.abs(endsAt - (Date.now() + 3_600_000)) < 5_000);
});

test('a person comes back only to a page of the service', (t) => {
  t.is(safeReturnTo('/ui/builds/bld-1?status=running'), '/ui/builds/bld-1?status=running');
  for (const bad of [
    'https://evil.example/',
    '//evil.example/ui/',
    '/ui//evil',
    '/auth/logout',
    '/ui/<x>',
    undefined,
  ])
    t.is(safeReturnTo(bad), '/ui/', String(bad));
});
