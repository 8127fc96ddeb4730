/**
 * Why a build ran, by file, on the real stack (the git server, the Dev Containers CLI, BuildKit, a
 * registry): the second build of a repository whose build context is the repository root, after
 * `app.txt` changed and `old.txt` was removed, names both files with what happened to each (read
 * from the two commits' trees); many files are named up to 50 and the rest counted; a base image
 * moved under its tag is named with its old and new digest, as the registry served them.
 */
import test from 'ava';
import { httpsCreds, stack, startBuildAppFor, uniqueName } from '../helpers/build-support.js';
import { fixtureBuilder } from '../helpers/registry-images.js';
import { builtRecord } from '../helpers/built-record.js';
import { testRepo } from '../helpers/reuse-support.js';
import { MANIFEST_ACCEPT, registryFetch } from '../stack/registry-client.js';
import type { BuildRecord, ChangedInput } from '../../src/builds/types.js';

const changeOf = (record: BuildRecord, input: string): ChangedInput | undefined =>
  record.rebuiltBecause?.changes?.find((change) => change.input === input);

/** 200 files in 20 folders that no commit of the test changes. */
const LIBRARY = Object.fromEntries(
  Array.from({ length: 200 }, (_, i) => [`lib/d${i % 20}/f${i}.txt`, `${i}\n`]),
);

test('a root build context: the changed and the removed file are named, then 50 of many and a count', async (t) => {
  const app = await startBuildAppFor(t, { build: { reuse: true } });
  const repo = await testRepo('rebuilt-files');
  t.teardown(repo.dispose);
  await repo.commit({
    '.devcontainer/devcontainer.json': JSON.stringify({ build: { dockerfile: 'Dockerfile', context: '..' } }),
    '.devcontainer/Dockerfile': `FROM ${stack.BASE_IMAGE_ANON}\nCOPY app.txt /app.txt\n`,
    'app.txt': 'one\n',
    'old.txt': 'old\n',
    ...LIBRARY,
  });
  const body = {
    repository: repo.url,
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name: uniqueName('rebuilt-files') },
  };
  const first = await builtRecord(t, app, body);
  t.deepEqual(first.record.rebuiltBecause?.inputs, ['no earlier build']);

  const rootBefore = first.record.key?.inputs.find((input) => input.name === 'path /')?.digest;
  await repo.commit({ 'app.txt': 'two\n', 'old.txt': null });
  const second = await builtRecord(t, app, body);
  const root = changeOf(second.record, 'path /');
  t.deepEqual(
    root,
    {
      input: 'path /',
      before: rootBefore,
      after: second.record.key?.inputs.find((input) => input.name === 'path /')?.digest,
      files: [
        { path: 'app.txt', change: 'changed' },
        { path: 'old.txt', change: 'removed' },
      ],
      moreFiles: 0,
    },
    JSON.stringify(second.record.rebuiltBecause),
  );
  t.is(second.record.rebuiltBecause?.changes?.length, 1, 'only the root differs');
  t.regex(
    second.record.rebuiltBecause?.inputs.join('\n') ?? '',
    /^path \/ \(the repository root\): [0-9a-f]{12} -> [0-9a-f]{12}: app\.txt changed, old\.txt removed$/,
  );
  t.regex(second.log, /inputs changed since the last build[^\n]*: app\.txt changed, old\.txt removed\n/);

  const many = Object.fromEntries(Array.from({ length: 57 }, (_, i) => [`data/f${100 + i}.txt`, `${i}\n`]));
  await repo.commit({ ...many, 'lib/d3/f3.txt': 'three\n' });
  const third = await builtRecord(t, app, body);
  const wide = changeOf(third.record, 'path /');
  t.is(wide?.files?.length, 50);
  t.is(wide?.moreFiles, 8, '58 files differ: 50 named, 8 counted');
  t.deepEqual(wide?.files?.[0], { path: 'data/f100.txt', change: 'added' });
  t.regex(third.record.rebuiltBecause?.inputs[0] ?? '', /, 8 more files$/);
});

test('a base image moved under its tag is named with the digest the registry served before and after', async (t) => {
  const app = await startBuildAppFor(t, { build: { reuse: true } });
  const images = await fixtureBuilder(stack);
  t.teardown(images.dispose);
  const ns = uniqueName('rebuilt-base');
  const base = `${stack.REGISTRY_ANON}/${ns}/base:1`;
  const pushBase = async (version: string): Promise<string> => {
    await images.build({
      dockerfile: `FROM ${stack.BASE_IMAGE_ANON}\nLABEL ibs.base-version=${version}\n`,
      platforms: ['linux/amd64'],
      tags: [base],
    });
    const head = await registryFetch(stack.REGISTRY_ANON, `/v2/${ns}/base/manifests/1`, {
      method: 'HEAD',
      headers: { accept: MANIFEST_ACCEPT },
    });
    return head.headers.get('docker-content-digest') ?? '';
  };
  const before = await pushBase('1');
  const repo = await testRepo('rebuilt-base');
  t.teardown(repo.dispose);
  await repo.commit({ '.devcontainer/devcontainer.json': JSON.stringify({ image: base }) });
  const body = {
    repository: repo.url,
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name: `${ns}/app` },
  };
  await builtRecord(t, app, body);
  const after = await pushBase('2');
  t.not(after, before);
  await repo.commit({ 'README.md': '# outside the inputs\n' });
  const { record } = await builtRecord(t, app, body);
  t.deepEqual(record.rebuiltBecause?.changes, [{ input: `base image ${base}`, before, after }]);
  t.deepEqual(record.rebuiltBecause?.inputs, [`base image ${base}: ${before} -> ${after}`]);
});
