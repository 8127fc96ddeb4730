import test from 'ava';
import { Masks, masker } from '../../../../src/client/mask.js';
import { MASK } from '../../../../src/secrets/masking.js';
import { credentialsOf, secretsOf } from '../../../../src/client/env.js';
import { buildBody } from '../../../../src/client/build-request.js';
import { UsageError } from '../../../../src/client/args.js';

test('a secret is masked as given, URL-encoded and inside base64 user:secret', (t) => {
  const mask = masker([{ value: 'p@ss/w0rd', user: 'bot' }]);
  const basic = Buffer.from('bot:p@ss/w0rd').toString('base64');
  t.is(mask(`a p@ss/w0rd b p%40ss%2Fw0rd c ${basic}`), `a ${MASK} b ${MASK} c ${MASK}`);
  t.is(masker([])('nothing'), 'nothing');
});

test('credentials come from the environment, in pairs, into the request body', (t) => {
  const env = {
    IBS_GIT_USERNAME: 'u',
    IBS_GIT_TOKEN: 'tok',
    IBS_REGISTRY_USERNAME: 'ru',
    IBS_REGISTRY_PASSWORD: 'rp',
  };
  const credentials = credentialsOf(env, 'reg.example');
  t.deepEqual(buildBody({ repository: 'https://g/a.git' }, credentials), {
    repository: 'https://g/a.git',
    gitCredentials: { username: 'u', token: 'tok' },
    registryCredentials: { registry: 'reg.example', username: 'ru', password: 'rp' },
  });
  t.deepEqual(
    secretsOf(credentials).map((s) => s.value),
    ['tok', 'rp'],
  );
  t.throws(() => credentialsOf({ IBS_GIT_TOKEN: 't' }, undefined), { instanceOf: UsageError });
  t.throws(() => credentialsOf({ IBS_REGISTRY_USERNAME: 'a', IBS_REGISTRY_PASSWORD: 'b' }, undefined), {
    instanceOf: UsageError,
  });
  t.is(
    credentialsOf({ IBS_REGISTRY: 'other', IBS_REGISTRY_USERNAME: 'a', IBS_REGISTRY_PASSWORD: 'b' }, 'x')
      .registry?.registry,
    'other',
  );
});

test('the build body carries only what was given', (t) => {
  t.deepEqual(
    buildBody(
      { repository: 'r', branch: 'dev', name: 'n', platform: ['linux/amd64'], 'cache-to': 'type=inline' },
      {},
    ),
    {
      repository: 'r',
      branch: 'dev',
      image: { registry: undefined, name: 'n', tag: undefined },
      platforms: ['linux/amd64'],
      buildOptions: { cacheTo: 'type=inline' },
    },
  );
  t.throws(() => buildBody({}, {}), { instanceOf: UsageError, message: /--repository/ });
});

test('Masks grows: a secret learned mid-run is masked from then on, by the same function', (t) => {
  const masks = new Masks([{ value: 'first-secret' }]);
  const mask = masks.mask;
  t.is(mask('first-secret later-token'), `${MASK} later-token`);
  masks.add({ value: 'later-token' });
  masks.add({ value: '' });
  t.is(mask('first-secret later-token'), `${MASK} ${MASK}`);
});
