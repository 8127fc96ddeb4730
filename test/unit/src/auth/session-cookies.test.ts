// The cookies of people's sign-in (docs/auth.md): read from a Cookie header by exact name, written
// with the attributes the docs promise, and the memory store of sessions ending each at its end.
import test from 'ava';
import { cookieOf, setCookie } from '../../../../src/auth/session-cookies.js';
import { createMemorySessions } from '../../../../src/auth/sessions.js';

test('a cookie is read by its exact name, the first of that name', (t) => {
  const header = 'xibs_session=no; ibs_session=abc; ibs_csrf=def; ibs_session=second';
  t.is(cookieOf(header, 'ibs_session'), 'abc');
  t.is(cookieOf(header, 'ibs_csrf'), 'def');
  t.is(cookieOf(header, 'ibs_sign_in'), undefined);
  t.is(cookieOf(undefined, 'ibs_session'), undefined);
});

test('Set-Cookie carries SameSite=Lax, HttpOnly and Secure as asked, and Max-Age 0 to remove', (t) => {
  t.is(
    setCookie('ibs_session', 'abc', { secure: true, httpOnly: true, path: '/', maxAge: 3600.7 }),
    'ibs_session=abc; Path=/; Max-Age=3600; SameSite=Lax; HttpOnly; Secure',
  );
  t.is(
    setCookie('ibs_csrf', '', { secure: false, httpOnly: false, path: '/', maxAge: -5 }),
    'ibs_csrf=; Path=/; Max-Age=0; SameSite=Lax',
  );
});

test('the memory store answers a session until its end, then never again', async (t) => {
  let now = 1_000_000;
  const store = createMemorySessions(() => now);
  const session = {
    issuerName: 'people',
    issuer: 'https://sso',
    subject: 'alice',
    claims: {},
    endsAt: now + 1000,
  };
  await store.put('d1', session);
  await store.put('d2', { ...session, endsAt: now + 5000 });
  t.deepEqual(await store.get('d1'), session);
  now += 1000;
  t.is(await store.get('d1'), undefined);
  t.truthy(await store.get('d2'));
  await store.delete('d2');
  t.is(await store.get('d2'), undefined);
  t.deepEqual(await store.hmacKey(), await store.hmacKey());
});
