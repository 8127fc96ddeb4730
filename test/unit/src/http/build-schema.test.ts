import { BUILD_PLATFORM_PATTERN } from '../../../../src/rules/image-reference.js';
import test from 'ava';
import { isServiceError } from '../../../../src/errors/errors.js';
import { parseBuildRequest } from '../../../../src/http/build-schema.js';

const accepted: [string, unknown][] = [
  ['repository only', { repository: 'x' }],
  ['nulls where the contract allows them', { repository: 'x', branch: null, image: null }],
  ['image sub-fields null or absent', { repository: 'x', image: { registry: null, name: 'a/b', tag: null } }],
  ['empty image object', { repository: 'x', image: {} }],
  ['empty platforms (server default)', { repository: 'x', platforms: [] }],
  ['platform with variant', { repository: 'x', platforms: ['linux/arm64/v8', 'linux/386', 'windows/amd64'] }],
  ['empty buildOptions', { repository: 'x', buildOptions: {} }],
  [
    'every field',
    {
      repository: 'x',
      branch: 'main',
      image: { registry: '127.0.0.1:5000', name: 'dev/app', tag: 'v1.0' },
      gitCredentials: { username: 'u', token: 't0k3n with spaces and ünïcode' },
      registryCredentials: { registry: '127.0.0.1:5000', username: 'u', password: 'p@ss:word' },
      platforms: ['linux/amd64'],
      buildOptions: {
        noCache: true,
        cacheFrom: 'r/c:1',
        cacheTo: 'type=registry,ref=r/c:1,mode=max',
        mode: 'never',
      },
    },
  ],
  ['unknown top-level fields of any type', { repository: 'x', extra: [1, { a: null }], another: null }],
];

for (const [why, body] of accepted) {
  test(`shape accepted: ${why}`, (t) => {
    t.deepEqual(parseBuildRequest(body), body);
  });
}

test('a refusal carries where it failed for the service log, never in the body', (t) => {
  const err = t.throws(() => parseBuildRequest({ repository: 'x', platforms: ['linux'] }));
  t.true(isServiceError(err));
  if (!isServiceError(err)) return;
  t.deepEqual(Object.keys(err.toBody()), ['error']);
  t.deepEqual(err.details.cause, [`/platforms/0 must match pattern "${BUILD_PLATFORM_PATTERN}"`]);
});
