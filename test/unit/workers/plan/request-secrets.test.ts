// Build secrets in the plan (pure): each bad input is its own 400 naming the id and never the
// value; the server entries offered follow their scopes; a request id replaces a server entry;
// values are masked, ids (not values) enter the build key and the request identity.
import test from 'ava';
import type { Config } from '../../../../src/config/types.js';
import type { ErrorCode, ServiceError } from '../../../../src/errors/errors.js';
import { parseBuildRequest } from '../../../../src/http/build-schema.js';
import type { BuildPlan } from '../../../../workers/plan/plan-types.js';
import { planBuild as planRequest } from '../../../../workers/plan/plan.js';
import { buildKey, type BuildKeyInput } from '../../../../workers/reuse/build-key.js';
import { changedInputs } from '../../../../workers/reuse/input-changes.js';
import { requestIdentity } from '../../../../workers/reuse/request-identity.js';
import { testConfig } from '../../../helpers/app.js';

/** What POST /build does with a body: the shape check, then the plan. */
const planBuild = (body: unknown, cfg: Config): BuildPlan => planRequest(parseBuildRequest(body), cfg);

const CANARY = 'CANARY-request-secret-9c2e';
const REPO = 'https://git.example.com:8443/team/app.git';
const body = (buildSecrets: unknown, repository = REPO) => ({
  repository,
  image: { registry: 'registry.example.com' },
  buildSecrets,
});
const SERVER = [
  { id: 'npmrc', value: 'server-npmrc', repositories: [{ host: 'GIT.example.com', pathPrefix: 'team/' }] },
  { id: 'npmrc', value: 'second-npmrc', repositories: [{ host: 'git.example.com' }] },
  { id: 'pip', value: 'server-pip', repositories: [{ host: 'git.example.com', pathPrefix: 'other/' }] },
  { id: 'apt', value: 'server-apt', repositories: [{ host: 'elsewhere.example' }] },
];
const config = (overrides: Partial<Config> = {}): Config =>
  testConfig({ scratchDir: '/nonexistent', buildSecrets: SERVER, ...overrides });

const BAD: readonly [string, unknown, ErrorCode, RegExp][] = [
  [
    'an id with a slash',
    { 'a/b': CANARY },
    'INVALID_BUILD_SECRET_ID',
    /invalid secret id "a\/b": an id is 1 to 64/,
  ],
  ['an id starting with a dot', { '.npmrc': CANARY }, 'INVALID_BUILD_SECRET_ID', /"\.npmrc"/],
  ['an empty id', { '': CANARY }, 'INVALID_BUILD_SECRET_ID', /invalid secret id ""/],
  ['an id of 65 characters', { ['a'.repeat(65)]: CANARY }, 'INVALID_BUILD_SECRET_ID', /invalid secret id/],
  ['a number value', { npmrc: 42 }, 'BUILD_SECRET_NOT_STRING', /secret "npmrc" must be a string/],
  ['a null value', { npmrc: null }, 'BUILD_SECRET_NOT_STRING', /secret "npmrc" must be a string/],
  ['an object value', { npmrc: { v: CANARY } }, 'BUILD_SECRET_NOT_STRING', /must be a string/],
  [
    'a value over 64 KiB',
    { npmrc: CANARY + 'x'.repeat(65_536) },
    'BUILD_SECRET_TOO_LARGE',
    /secret "npmrc" is larger than 65536 bytes/,
  ],
  [
    '33 secrets',
    Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`s${i}`, CANARY])),
    'TOO_MANY_BUILD_SECRETS',
    /33 secrets given, at most 32/,
  ],
  ['an array', [CANARY], 'INVALID_FIELDS', /buildSecrets \(optional object/],
  ['a string', CANARY, 'INVALID_FIELDS', /missing or invalid fields/],
];

for (const [title, secrets, code, text] of BAD) {
  test(`buildSecrets with ${title}: 400 ${code}, the value never shown`, (t) => {
    const err = t.throws(() => planBuild(body(secrets), config())) as ServiceError;
    t.is(err.status, 400);
    t.is(err.code, code);
    t.regex(err.message, text);
    t.false(JSON.stringify(err.toBody()).includes(CANARY));
  });
}

test('a value of exactly 64 KiB and 32 secrets are accepted', (t) => {
  const secrets = Object.fromEntries(
    Array.from({ length: 32 }, (_, i) => [`s${i}`, 'v'.repeat(i === 0 ? 65_536 : 8)]),
  );
  t.is(planBuild(body(secrets), config({ buildSecrets: [] })).buildSecrets.length, 32);
});

test('server entries follow their scopes (host without port, any case; first entry of an id); the request wins', (t) => {
  const plan = planBuild(body(undefined), config());
  t.deepEqual(plan.buildSecrets, [{ id: 'npmrc', value: 'server-npmrc' }]);
  const other = planBuild(body(undefined, 'https://git.example.com/other/lib.git'), config());
  t.deepEqual(other.buildSecrets, [
    { id: 'npmrc', value: 'second-npmrc' },
    { id: 'pip', value: 'server-pip' },
  ]);
  t.deepEqual(planBuild(body(undefined, 'git@elsewhere.example:x/y.git'), config()).buildSecrets, [
    { id: 'apt', value: 'server-apt' },
  ]);
  t.deepEqual(planBuild(body(undefined, 'https://git.example.org/team/app.git'), config()).buildSecrets, []);
  const overridden = planBuild(body({ npmrc: CANARY, z: 'zz-value' }), config());
  t.deepEqual(overridden.buildSecrets, [
    { id: 'npmrc', value: CANARY },
    { id: 'z', value: 'zz-value' },
  ]);
  t.true(overridden.secrets.includes(CANARY));
  t.true(overridden.secrets.includes('zz-value'));
});

test('the request identity and the build key take the ids offered, not the values', (t) => {
  const cfg = config({ buildSecrets: [] });
  const a = planBuild(body({ npmrc: 'value-one' }), cfg);
  const b = planBuild(body({ npmrc: 'value-two' }), cfg);
  const none = planBuild(body(undefined), cfg);
  t.is(requestIdentity(a), requestIdentity(b));
  t.not(requestIdentity(a), requestIdentity(none));
  const input: BuildKeyInput = {
    configDigest: 'sha256:00',
    paths: [],
    baseImages: [],
    features: [],
    platforms: [],
    cliVersion: '0.0.0',
    buildProcessVersion: 1,
  };
  const withIds = { ...input, secretIds: ['npmrc'] };
  t.is(buildKey({ ...input, secretIds: [] }), buildKey(input), 'no secrets: the key of before');
  t.not(buildKey(withIds), buildKey(input));
  t.is(buildKey({ ...input, secretIds: ['b', 'a'] }), buildKey({ ...input, secretIds: ['a', 'b'] }));
  t.deepEqual(changedInputs(input, withIds), ['build secret ids: none -> npmrc']);
});
