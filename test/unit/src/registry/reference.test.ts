import test from 'ava';
import { isServiceError } from '../../../../src/errors/errors.js';
import {
  authKeyFor,
  isInsecureRegistry,
  parseReference,
  registryHost,
  splitRegistry,
} from '../../../../src/registry/reference.js';
import { NAME_PATTERN, REGISTRY_PATTERN, TAG_PATTERN } from '../../../../src/rules/image-reference.js';

const insecure = ['localhost:5000', 'http://127.0.0.1:6000/'];

test('parseReference resolves valid references', (t) => {
  const rows: [[string, string, string], Partial<ReturnType<typeof parseReference>>][] = [
    [
      ['ghcr.io', 'org/app', 'v1.2'],
      { host: 'ghcr.io', origin: 'https://ghcr.io', name: 'org/app', image: 'ghcr.io/org/app:v1.2' },
    ],
    [
      ['docker.io', 'ubuntu', 'latest'],
      { host: 'registry-1.docker.io', name: 'library/ubuntu', image: 'docker.io/ubuntu:latest' },
    ],
    [['index.docker.io', 'org/app', 'x'], { host: 'registry-1.docker.io', name: 'org/app' }],
    [['https://ghcr.io', 'a', 'b'], { registry: 'ghcr.io', origin: 'https://ghcr.io', image: 'ghcr.io/a:b' }],
    [['localhost:5000', 'dev/base', '1'], { scheme: 'http', origin: 'http://localhost:5000' }],
    [['http://localhost:5000', 'dev/base', '1'], { scheme: 'http', registry: 'localhost:5000' }],
    // an explicit https:// wins even for an insecure registry
    [['https://localhost:5000', 'dev/base', '1'], { scheme: 'https' }],
    [['127.0.0.1:6000', 'a', 'b'], { scheme: 'http' }],
    [['127.0.0.1:6001', 'a', 'b'], { scheme: 'https' }],
    [['[::1]:5000', 'a', 'b'], { host: '[::1]:5000', scheme: 'https' }],
    [['Registry.Example.COM', 'a', 'b'], { host: 'registry.example.com', registry: 'Registry.Example.COM' }],
    [['r.example', 'a.b/c_d/e__f/g--h/i-j', 'A_b.c-9'], { name: 'a.b/c_d/e__f/g--h/i-j', tag: 'A_b.c-9' }],
    [['r.example', 'a', '_'.padEnd(128, 'x')], { tag: '_'.padEnd(128, 'x') }],
    // A registry with a namespace path: the call goes to the host, the path prefixed to the name.
    [
      ['localhost:5000/team', 'app', '1'],
      {
        registry: 'localhost:5000/team',
        host: 'localhost:5000',
        origin: 'http://localhost:5000',
        name: 'team/app',
        image: 'localhost:5000/team/app:1',
      },
    ],
    [
      ['ghcr.io/org/sub', 'dev/app', 'v1'],
      { host: 'ghcr.io', name: 'org/sub/dev/app', image: 'ghcr.io/org/sub/dev/app:v1' },
    ],
    [['https://ghcr.io/org/', 'app', 'v1'], { registry: 'ghcr.io/org', host: 'ghcr.io', name: 'org/app' }],
    [['http://localhost:5000/team', 'app', '1'], { scheme: 'http', name: 'team/app' }],
    // Docker Hub: no `library/` when a namespace is given.
    [['docker.io/myorg', 'app', '1'], { host: 'registry-1.docker.io', name: 'myorg/app' }],
  ];
  for (const [[registry, name, tag], want] of rows) {
    const got = parseReference({ registry, name, tag }, insecure);
    t.like(got, want, `${registry} ${name} ${tag}`);
  }
});

const REFERENCE_CODES: readonly string[] = [
  'REGISTRY_SCHEME_NOT_ALLOWED',
  'INVALID_REGISTRY',
  'REGISTRY_HTTP_NOT_ALLOWED',
  'INVALID_IMAGE_NAME',
  'INVALID_TAG',
];

test('parseReference refuses anything outside the grammar with a 400', (t) => {
  const rows: [string, string, string][] = [
    ['http://ghcr.io', 'a', 'b'], // http:// only for insecure registries
    ['ftp://ghcr.io', 'a', 'b'],
    ['ghcr.io/Org', 'a', 'b'],
    ['ghcr.io/org/', 'a', 'b'],
    ['ghcr.io//org', 'a', 'b'],
    ['ghcr.io/../x', 'a', 'b'],
    ['r.example/' + 'n'.repeat(250), 'abcdef', 'b'], // namespace + name over 255
    ['user@ghcr.io', 'a', 'b'],
    ['ghcr.io:99999', 'a', 'b'],
    ['ghcr.io:', 'a', 'b'],
    ['-bad.example', 'a', 'b'],
    ['ghcr.io', 'Upper', 'b'],
    ['ghcr.io', 'a//b', 'b'],
    ['ghcr.io', '/a', 'b'],
    ['ghcr.io', 'a/', 'b'],
    ['ghcr.io', 'a..b', 'b'],
    ['ghcr.io', '../etc', 'b'],
    ['ghcr.io', 'a', '.b'],
    ['ghcr.io', 'a', '-b'],
    ['ghcr.io', 'a', 'b/c'],
    ['ghcr.io', 'a', 'sha256:abc'],
    ['ghcr.io', 'a', 'x'.repeat(129)],
    ['ghcr.io', 'a'.repeat(256), 'b'],
    ['ghcr.io', 'a', 'b c'],
    ['ghcr.io', 'a', 'b\n'],
  ];
  for (const [registry, name, tag] of rows) {
    const err = t.throws(
      () => parseReference({ registry, name, tag }, insecure),
      undefined,
      `${registry} ${name} ${tag}`,
    );
    t.true(
      isServiceError(err) && REFERENCE_CODES.includes(err.code) && err.status === 400,
      `${registry} ${name} ${tag}`,
    );
  }
});

test('isInsecureRegistry compares host[:port] of entries that may carry a scheme or path', (t) => {
  t.true(isInsecureRegistry('localhost:5000', insecure));
  t.true(isInsecureRegistry('127.0.0.1:6000', insecure));
  t.false(isInsecureRegistry('localhost', insecure));
  t.false(isInsecureRegistry('127.0.0.1:6001', insecure));
});

test('OCI patterns', (t) => {
  const name = new RegExp(NAME_PATTERN);
  for (const ok of ['a', 'dev/base', 'a.b/c_d/e__f/g-h', 'a--b']) t.true(name.test(ok), ok);
  for (const bad of ['A', 'a/', '/a', 'a..b', 'a_-b', '-a', 'a b', 'a\nb']) t.false(name.test(bad), bad);

  const tag = new RegExp(TAG_PATTERN);
  for (const ok of ['1', 'latest', 'sha-abc1234', 'V1.2_3-x']) t.true(tag.test(ok), ok);
  for (const bad of ['', '.x', '-x', 'a:b', 'x'.repeat(129), 'a\n'])
    t.false(tag.test(bad), JSON.stringify(bad));

  const registry = new RegExp(REGISTRY_PATTERN);
  for (const ok of [
    'ghcr.io',
    '127.0.0.1:5000',
    'localhost:5000',
    'ghcr.io/org',
    'r.example:443/team/sub',
    '[::1]:5000',
  ])
    t.true(registry.test(ok), ok);
  for (const bad of ['', 'https://ghcr.io', 'ghcr.io/', '-r.io', 'r.io/Org', 'r io', 'r.io\r\n', 'user@r.io'])
    t.false(registry.test(bad), JSON.stringify(bad));
});

test('registryHost: scheme, namespace path and case dropped (every by-host match)', (t) => {
  const rows: [string, string][] = [
    ['https://index.docker.io/v1/', 'index.docker.io'],
    ['http://127.0.0.1:5000', '127.0.0.1:5000'],
    ['Registry.Example.com:443/some/path', 'registry.example.com:443'],
    ['ghcr.io/org', 'ghcr.io'],
    ['ghcr.io', 'ghcr.io'],
  ];
  for (const [text, host] of rows) t.is(registryHost(text), host, text);
});

test('splitRegistry: host and namespace path, or undefined off the grammar', (t) => {
  t.deepEqual(splitRegistry('localhost:5000/team/sub'), { host: 'localhost:5000', namespace: 'team/sub' });
  t.deepEqual(splitRegistry('[::1]:5000'), { host: '[::1]:5000' });
  for (const bad of ['r.io:0', 'r.io:70000/x', 'https://r.io', 'r.io/', 'r.io/A']) {
    t.is(splitRegistry(bad), undefined, bad);
  }
});

test('authKeyFor: a credential is written under its registry host (Docker Hub: its classic key)', (t) => {
  t.is(authKeyFor('localhost:5000/team'), 'localhost:5000');
  t.is(authKeyFor('GHCR.io/org'), 'ghcr.io');
  t.is(authKeyFor('docker.io/myorg'), 'https://index.docker.io/v1/');
});

test('isInsecureRegistry: a registry with a namespace path is insecure when its host is', (t) => {
  t.true(isInsecureRegistry('localhost:5000/team', insecure));
  t.false(isInsecureRegistry('localhost:5001/team', insecure));
});
