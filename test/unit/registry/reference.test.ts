import test from 'ava';
import { isServiceError } from '../../../src/errors.js';
import { isInsecureRegistry, parseReference } from '../../../src/registry/reference.js';

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
    ['ghcr.io/path', 'a', 'b'],
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
