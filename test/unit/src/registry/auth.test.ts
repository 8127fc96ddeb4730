import test from 'ava';
import {
  TokenCache,
  credentialIdentity,
  mergeScopes,
  parseWwwAuthenticate,
  tokenLifetimeMs,
} from '../../../../src/registry/auth.js';

test('parseWwwAuthenticate reads every challenge, quoted values and commas inside quotes', (t) => {
  const rows: [string, ReturnType<typeof parseWwwAuthenticate>][] = [
    [
      'Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull"',
      [
        {
          scheme: 'bearer',
          params: {
            realm: 'https://auth.example/token',
            service: 'registry.example',
            scope: 'repository:a/b:pull',
          },
        },
      ],
    ],
    ['Basic realm="Registry Realm"', [{ scheme: 'basic', params: { realm: 'Registry Realm' } }]],
    [
      // several challenges in one header, a comma inside a quoted scope
      'Basic realm="x", Bearer realm="https://a/t", scope="repository:n:pull,push"',
      [
        { scheme: 'basic', params: { realm: 'x' } },
        { scheme: 'bearer', params: { realm: 'https://a/t', scope: 'repository:n:pull,push' } },
      ],
    ],
    [
      // unquoted values, odd spacing, upper-case parameter names, escaped quote
      'BEARER  Realm = https://a/t ,Service=svc,  error="insufficient \\"scope\\""',
      [{ scheme: 'bearer', params: { realm: 'https://a/t', service: 'svc', error: 'insufficient "scope"' } }],
    ],
    // token68 followed by another challenge
    [
      'Negotiate abc123==, Basic realm="r"',
      [
        { scheme: 'negotiate', params: {}, token68: 'abc123==' },
        { scheme: 'basic', params: { realm: 'r' } },
      ],
    ],
    // scheme alone, then an empty header
    ['Basic', [{ scheme: 'basic', params: {} }]],
    ['', []],
    // two headers joined by node with ", "
    [
      'Bearer realm="https://a/t",service="s", Basic realm="b"',
      [
        { scheme: 'bearer', params: { realm: 'https://a/t', service: 's' } },
        { scheme: 'basic', params: { realm: 'b' } },
      ],
    ],
  ];
  for (const [header, want] of rows) t.deepEqual(parseWwwAuthenticate(header), want, header);
});

test('mergeScopes adds the challenge scopes and merges actions of one resource', (t) => {
  const rows: [string, string | undefined, string[]][] = [
    ['repository:a:pull', undefined, ['repository:a:pull']],
    ['repository:a:pull', 'repository:a:pull', ['repository:a:pull']],
    ['repository:a:pull,push,delete', 'repository:a:delete', ['repository:a:pull,push,delete']],
    [
      'repository:a:pull',
      'repository:a:push repository:b:pull',
      ['repository:a:pull,push', 'repository:b:pull'],
    ],
    ['repository:a:pull', 'registry:catalog:*', ['repository:a:pull', 'registry:catalog:*']],
    ['repository:a:pull', '', ['repository:a:pull']],
  ];
  for (const [ours, challenge, want] of rows)
    t.deepEqual(mergeScopes(ours, challenge), want, `${ours} + ${challenge}`);
});

test('credentialIdentity distinguishes credentials without containing them', (t) => {
  const a = credentialIdentity({ username: 'u', password: 'secret-one' });
  const b = credentialIdentity({ username: 'u', password: 'secret-two' });
  t.not(a, b);
  t.is(a, credentialIdentity({ username: 'u', password: 'secret-one' }));
  t.false(a.includes('secret'));
  t.is(credentialIdentity(undefined), 'anonymous');
  // no ambiguity between user/password splits
  t.not(
    credentialIdentity({ username: 'ab', password: 'c' }),
    credentialIdentity({ username: 'a', password: 'bc' }),
  );
});

test('tokenLifetimeMs honours expires_in (default 60 s) minus a margin', (t) => {
  const rows: [unknown, number][] = [
    [undefined, 45_000],
    [60, 45_000],
    [300, 270_000],
    [3600, 3_570_000],
    [8, 6_000],
    [0, 45_000],
    ['120', 45_000],
  ];
  for (const [expiresIn, want] of rows) t.is(tokenLifetimeMs(expiresIn), want, String(expiresIn));
});

test('TokenCache keys by registry, realm, service, scope and identity, and expires entries', (t) => {
  let now = 1_000;
  const cache = new TokenCache(3, () => now);
  const key = {
    registry: 'r:1',
    realm: 'https://a/t',
    service: 's',
    scope: 'repository:n:pull',
    identity: 'x',
  };
  cache.set(key, 'tok', 10_000);
  t.is(cache.get(key), 'tok');
  for (const field of ['registry', 'realm', 'service', 'scope', 'identity'] as const) {
    t.is(cache.get({ ...key, [field]: 'other' }), undefined, field);
  }
  now += 9_999;
  t.is(cache.get(key), 'tok');
  now += 1;
  t.is(cache.get(key), undefined);
  t.is(cache.size, 0);
});

test('TokenCache stays bounded, dropping the oldest entries', (t) => {
  const cache = new TokenCache(2);
  const k = (scope: string) => ({ registry: 'r', realm: 'x', service: 's', scope, identity: 'i' });
  cache.set(k('a'), '1', 60_000);
  cache.set(k('b'), '2', 60_000);
  cache.set(k('c'), '3', 60_000);
  t.is(cache.size, 2);
  t.is(cache.get(k('a')), undefined);
  t.is(cache.get(k('c')), '3');
});
