import test from 'ava';
import { mkdtemp, readFile, readlink, rm, stat, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requestDockerConfig, writeRequestDockerConfig } from '../../../../workers/builder/docker-config.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

const cases: [string, Parameters<typeof requestDockerConfig>, ReturnType<typeof requestDockerConfig>][] = [
  ['no ambient, no request', [{ auths: {} }], { auths: {} }],
  [
    'ambient only',
    [{ auths: { 'r1:5000': { auth: b64('a:b') } } }],
    { auths: { 'r1:5000': { auth: b64('a:b') } } },
  ],
  [
    'request credentials added next to other ambient entries',
    [{ auths: { 'r1:5000': { auth: b64('a:b') } } }, { registry: 'r2:5000', username: 'u', password: 'p' }],
    { auths: { 'r1:5000': { auth: b64('a:b') }, 'r2:5000': { auth: b64('u:p') } } },
  ],
  [
    'request credentials replace the ambient entry of the same registry, whatever its key form',
    [
      { auths: { 'https://R1:5000/v1/': { auth: b64('a:b') }, 'r3:1': { auth: b64('c:d') } } },
      { registry: 'r1:5000', username: 'u', password: 'p:q' },
    ],
    { auths: { 'r3:1': { auth: b64('c:d') }, 'r1:5000': { auth: b64('u:p:q') } } },
  ],
  [
    'request credentials for a registry with a namespace path: written under its host, replacing the ambient entry',
    [
      { auths: { 'localhost:5000': { auth: b64('a:b') } } },
      { registry: 'localhost:5000/team', username: 'u', password: 'p' },
    ],
    { auths: { 'localhost:5000': { auth: b64('u:p') } } },
  ],
];

for (const [name, args, expected] of cases) {
  test(`requestDockerConfig: ${name}`, (t) => t.deepEqual(requestDockerConfig(...args), expected));
}

test('writeRequestDockerConfig: 0600 config.json and links to the shared buildx state', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'dockercfg-test-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const state = join(root, 'state');
  const dir = join(root, 'req');
  await mkdir(join(state, 'buildx', 'instances'), { recursive: true });
  await mkdir(dir);
  await writeRequestDockerConfig({
    dir,
    stateDir: state,
    ambient: { auths: {} },
    credentials: { registry: 'r:1', username: 'u', password: 'secret' },
  });
  const file = join(dir, 'config.json');
  t.is((await stat(file)).mode & 0o777, 0o600);
  t.deepEqual(JSON.parse(await readFile(file, 'utf8')), { auths: { 'r:1': { auth: b64('u:secret') } } });
  t.is(await readlink(join(dir, 'buildx')), join(state, 'buildx'));
  await t.throwsAsync(readlink(join(dir, 'cli-plugins')), { code: 'ENOENT' });
  // The shared state never receives the request's credentials.
  await t.throwsAsync(stat(join(state, 'config.json')), { code: 'ENOENT' });
});
