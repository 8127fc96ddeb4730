/**
 * Layer compression: the docker wrapper turns the CLI's `--push` into an image output with the
 * compression, forced (OCI media types but for gzip); the compression
 * is a build key input and a request identity input, except gzip, whose keys stay as they were.
 */
import test from 'ava';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../../../src/exec/run.js';
import { COMPRESSION_VAR, writeDockerWrapper, labelVar } from '../../../../workers/builder/docker-wrapper.js';
import { buildKey, type BuildKeyInput } from '../../../../workers/reuse/build-key.js';
import { changedInputs } from '../../../../workers/reuse/input-changes.js';
import { requestIdentity } from '../../../../workers/reuse/request-identity.js';
import { planBuild } from '../../../../workers/plan/plan.js';
import { PLAN } from '../../../helpers/fake-build.js';
import { testConfig } from '../../../helpers/app.js';

test('the wrapper replaces --push with an image output of the compression; unset: as given', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'wrapper-compression-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'docker'), '#!/bin/sh\nfor a do printf "%s\\n" "$a"; done\n', { mode: 0o755 });
  const wrapper = await writeDockerWrapper(dir);
  const call = async (env: Record<string, string>) =>
    (
      await run(wrapper, ['buildx', 'build', '--push', '-t', 'r/app:1', '.'], {
        baseEnv: { PATH: `${dir}:/usr/bin:/bin` },
        env: { [labelVar('source')]: 'https://h/x.git', [labelVar('revision')]: 'abc', ...env },
        captureStdout: true,
      })
    ).stdout.split('\n');
  const zstd = await call({ [COMPRESSION_VAR]: 'zstd' });
  t.false(zstd.includes('--push'));
  const output = zstd[zstd.indexOf('--output') + 1];
  t.is(output, 'type=image,push=true,compression=zstd,force-compression=true,oci-mediatypes=true');
  t.true(zstd.includes('r/app:1'));
  const gzip = await call({ [COMPRESSION_VAR]: 'gzip' });
  t.is(gzip[gzip.indexOf('--output') + 1], 'type=image,push=true,compression=gzip,force-compression=true');
  const plain = await call({});
  t.true(plain.includes('--push'));
  t.false(plain.includes('--output'));
});

const input: BuildKeyInput = {
  configDigest: `sha256:${'c'.repeat(64)}`,
  paths: [],
  baseImages: [],
  features: [],
  platforms: [],
  cliVersion: '1',
  buildProcessVersion: 1,
};

test('the compression is a key input, named in the diff; gzip leaves the key unchanged', (t) => {
  const zstd = { ...input, compression: 'zstd' };
  t.not(buildKey(zstd), buildKey(input));
  t.not(buildKey({ ...input, compression: 'estargz' }), buildKey(zstd));
  t.deepEqual(changedInputs(input, zstd), ['layer compression: gzip -> zstd']);
});

test('a request plans its compression (default gzip) and another compression is another request', (t) => {
  const config = testConfig({ scratchDir: tmpdir() });
  const base = { repository: 'https://git.example/o/app.git', image: { registry: 'r.example' } };
  t.is(planBuild(base, config).compression, 'gzip');
  const zstd = planBuild({ ...base, buildOptions: { compression: 'zstd' } }, config);
  t.is(zstd.compression, 'zstd');
  t.is(
    planBuild(base, { ...config, build: { ...config.build, compression: 'estargz' } }).compression,
    'estargz',
  );
  t.not(requestIdentity({ ...PLAN, compression: 'zstd' }), requestIdentity({ ...PLAN, compression: 'gzip' }));
});
