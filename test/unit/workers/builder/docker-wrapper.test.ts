import test, { type ExecutionContext } from 'ava';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../../../src/exec/run.js';
import {
  IDENTITY_ARG,
  KEYED_DIR_VAR,
  NODE_VAR,
  PLATFORMS_VAR,
  SECRETS_DIR_VAR,
  SECRETS_IDENTITY_VAR,
  writeDockerWrapper,
  labelVar,
} from '../../../../workers/builder/docker-wrapper.js';

/** A fake `docker` that prints each argument on its own line (NUL-free, so lines are exact). */
async function setup(t: ExecutionContext) {
  const dir = await mkdtemp(join(tmpdir(), 'wrapper-test-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'docker'), '#!/bin/sh\nfor a do printf "%s\\n" "$a"; done\n', { mode: 0o755 });
  const wrapper = await writeDockerWrapper(dir);
  const call = async (args: string[], env: Record<string, string> = {}) =>
    (
      await run(wrapper, args, {
        baseEnv: { PATH: `${dir}:/usr/bin:/bin` },
        env: { [labelVar('source')]: 'https://h/x.git', [labelVar('revision')]: 'abc', ...env },
        captureStdout: true,
      })
    ).stdout
      .split('\n')
      .slice(0, -1);
  return { dir, call };
}

test('buildx build gets the OCI labels; the rest is passed through untouched', async (t) => {
  const { call } = await setup(t);
  t.deepEqual(await call(['buildx', 'build', '--push', '-t', 'r/x:1', 'ctx dir']), [
    'buildx',
    'build',
    '--label',
    'org.opencontainers.image.source=https://h/x.git',
    '--label',
    'org.opencontainers.image.revision=abc',
    '--push',
    '-t',
    'r/x:1',
    'ctx dir',
  ]);
});

test('with IBS_LABEL_BRANCH, buildx build also gets the four retention labels', async (t) => {
  const { call } = await setup(t);
  const out = await call(['buildx', 'build', '.'], {
    [labelVar('branch')]: 'feature-x',
    [labelVar('built')]: '2026-11-26T08:00:00.000Z',
    [labelVar('namedTag')]: '',
    [labelVar('buildKey')]: 'ab'.repeat(32),
  });
  t.deepEqual(out.slice(6), [
    '--label',
    'image-build-service.branch=feature-x',
    '--label',
    'image-build-service.built=2026-11-26T08:00:00.000Z',
    '--label',
    'image-build-service.tag=',
    '--label',
    `image-build-service.build-key=${'ab'.repeat(32)}`,
    '.',
  ]);
});

test('other commands pass through unchanged, without labels', async (t) => {
  const { call } = await setup(t);
  t.deepEqual(await call(['inspect', '--type', 'image', 'x']), ['inspect', '--type', 'image', 'x']);
  t.deepEqual(await call(['buildx', 'version']), ['buildx', 'version']);
});

test('with IBS_BUILD_PLATFORMS, the --platform value of buildx build is replaced by the full list', async (t) => {
  const { call } = await setup(t);
  const out = await call(['buildx', 'build', '--platform', 'linux/amd64', '--push', '.'], {
    [PLATFORMS_VAR]: 'linux/amd64,linux/386',
  });
  t.deepEqual(out.slice(6), ['--platform', 'linux/amd64,linux/386', '--push', '.']);
  const without = await call(['buildx', 'build', '--platform', 'linux/amd64', '.']);
  t.deepEqual(without.slice(6), ['--platform', 'linux/amd64', '.']);
});

test('hostile values are never interpreted by the wrapper shell', async (t) => {
  const { dir, call } = await setup(t);
  const canary = join(dir, 'canary');
  const hostile = `https://h/x.git$(touch ${canary});\`touch ${canary}\` "'*`;
  const out = await call(['buildx', 'build', `$(touch ${canary})`, '*', ''], {
    [labelVar('source')]: hostile,
    [PLATFORMS_VAR]: `linux/amd64 $(touch ${canary})`,
  });
  t.is(out[3], `org.opencontainers.image.source=${hostile}`);
  t.deepEqual(out.slice(6), [`$(touch ${canary})`, '*', '']);
  t.false(existsSync(canary));
});

test('with IBS_BUILD_SECRETS_DIR, buildx build gets one --secret per file of the folder: id and path, no value', async (t) => {
  const { dir, call } = await setup(t);
  const secrets = join(dir, 'build secrets');
  await mkdir(secrets);
  await writeFile(join(secrets, 'npmrc'), 'VALUE-CANARY-1');
  await writeFile(join(secrets, 'pip.conf'), 'VALUE-CANARY-2');
  const out = await call(['buildx', 'build', '--push', '.'], { [SECRETS_DIR_VAR]: secrets });
  t.deepEqual(out.slice(6), [
    '--secret',
    `id=pip.conf,src=${secrets}/pip.conf`,
    '--secret',
    `id=npmrc,src=${secrets}/npmrc`,
    '--push',
    '.',
  ]);
  t.false(out.join('\n').includes('VALUE-CANARY'));
  t.deepEqual(await call(['inspect', 'x'], { [SECRETS_DIR_VAR]: secrets }), ['inspect', 'x']);
  const empty = join(dir, 'empty');
  await mkdir(empty);
  t.deepEqual((await call(['buildx', 'build', '.'], { [SECRETS_DIR_VAR]: empty })).slice(6), ['.']);
});

test('with the secrets identity, each -f Dockerfile is replaced by its keyed copy and the identity is the last build arg', async (t) => {
  const { dir, call } = await setup(t);
  const dockerfile = join(dir, 'my Dockerfile');
  await writeFile(dockerfile, 'FROM base\nRUN --mount=type=secret,id=npmrc true\n');
  await writeFile(`${dockerfile}.dockerignore`, 'secret-dir\n');
  const env = { [SECRETS_IDENTITY_VAR]: 'a'.repeat(64), [NODE_VAR]: process.execPath, [KEYED_DIR_VAR]: dir };
  const args = ['buildx', 'build', '-f', dockerfile, '--build-arg', `${IDENTITY_ARG}=forged`, '.'];
  const out = await call(args, env);
  const copy = out[7] ?? '';
  t.deepEqual(out.slice(6), [
    '-f',
    copy,
    '--build-arg',
    `${IDENTITY_ARG}=forged`,
    '.',
    '--build-arg',
    `${IDENTITY_ARG}=${'a'.repeat(64)}`,
  ]);
  t.not(copy, dockerfile);
  t.true(copy.startsWith(dir) && copy.endsWith('/my Dockerfile'), copy);
  t.is(
    await readFile(copy, 'utf8'),
    `FROM base\nARG ${IDENTITY_ARG}\nRUN --mount=type=secret,id=npmrc true\n`,
  );
  t.is(await readFile(`${copy}.dockerignore`, 'utf8'), 'secret-dir\n');
  const other = await call(['buildx', 'build', `--file=${dockerfile}`, '.'], env);
  t.regex(other[7] ?? '', /^\/.*\/my Dockerfile$/);
  t.is(other[6], '--file');
  t.not(other[7], dockerfile);
});

test('with the secrets identity, a buildx build without a Dockerfile to key is refused; without it nothing changes', async (t) => {
  const { dir, call } = await setup(t);
  const keyedDir = join(dir, 'keyed');
  await mkdir(keyedDir);
  const env = {
    [SECRETS_IDENTITY_VAR]: 'a'.repeat(64),
    [NODE_VAR]: process.execPath,
    [KEYED_DIR_VAR]: keyedDir,
  };
  const refused = await t.throwsAsync(call(['buildx', 'build', '.'], env));
  t.regex(String(refused?.message), /exit|code|status/i);
  const missing = await t.throwsAsync(call(['buildx', 'build', '-f', '/nonexistent/Dockerfile', '.'], env));
  t.truthy(missing);
  t.deepEqual(await readdir(keyedDir), [], 'a Dockerfile that cannot be read leaves nothing');
  await writeFile(join(dir, 'Dockerfile'), 'FROM base\n');
  const { [KEYED_DIR_VAR]: _unset, ...withoutDir } = env;
  const nowhere = await t.throwsAsync(
    call(['buildx', 'build', '-f', join(dir, 'Dockerfile'), '.'], withoutDir),
  );
  t.truthy(nowhere, 'without the folder to write into, the copy is refused');
  t.deepEqual((await call(['buildx', 'build', '-f', 'Dockerfile', '.'])).slice(6), ['-f', 'Dockerfile', '.']);
});

test('a build with retention labels and offered secrets gets both: the four labels, the keyed copy, the identity last', async (t) => {
  const { dir, call } = await setup(t);
  const dockerfile = join(dir, 'Dockerfile');
  await writeFile(dockerfile, 'FROM base\nRUN --mount=type=secret,id=npmrc true\n');
  const out = await call(['buildx', 'build', '-f', dockerfile, '.'], {
    [labelVar('branch')]: 'main',
    [labelVar('built')]: '2026-11-26T08:00:00.000Z',
    [labelVar('namedTag')]: 'v1',
    [labelVar('buildKey')]: 'cd'.repeat(32),
    [SECRETS_IDENTITY_VAR]: 'b'.repeat(64),
    [NODE_VAR]: process.execPath,
    [KEYED_DIR_VAR]: dir,
  });
  const copy = out[15] ?? '';
  t.deepEqual(out.slice(6), [
    '--label',
    'image-build-service.branch=main',
    '--label',
    'image-build-service.built=2026-11-26T08:00:00.000Z',
    '--label',
    'image-build-service.tag=v1',
    '--label',
    `image-build-service.build-key=${'cd'.repeat(32)}`,
    '-f',
    copy,
    '.',
    '--build-arg',
    `${IDENTITY_ARG}=${'b'.repeat(64)}`,
  ]);
  t.not(copy, dockerfile);
  t.is(
    await readFile(copy, 'utf8'),
    `FROM base\nARG ${IDENTITY_ARG}\nRUN --mount=type=secret,id=npmrc true\n`,
  );
});
