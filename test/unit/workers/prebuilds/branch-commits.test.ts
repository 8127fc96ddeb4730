/**
 * A pass reads the branch tag's manifest only, and the image's config behind it only when that
 * manifest moved: a small fake registry serves `<name>:<branch tag>` (a manifest whose config names
 * a commit) and counts what each pass asks of it.
 */
import test from 'ava';
import { createHash } from 'node:crypto';
import type { PrebuildConfiguration } from '../../../../src/config/types.js';
import { RegistryClient } from '../../../../src/registry/client.js';
import { BranchImageCommits } from '../../../../workers/prebuilds/branch-commits.js';
import { fakeServer } from '../../../helpers/fake-registry.js';

const digestOf = (body: string): string => `sha256:${createHash('sha256').update(body).digest('hex')}`;

/** An image whose config carries `commit` as its revision label: its manifest and config blob. */
function image(commit: string): { manifest: string; config: string } {
  const config = JSON.stringify({
    architecture: 'amd64',
    os: 'linux',
    config: { Labels: { 'org.opencontainers.image.revision': commit } },
  });
  const manifest = JSON.stringify({
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    config: {
      mediaType: 'application/vnd.oci.image.config.v1+json',
      digest: digestOf(config),
      size: config.length,
    },
    layers: [],
  });
  return { manifest, config };
}

async function setup(t: { teardown: (fn: () => unknown) => void }) {
  const state: { current?: { manifest: string; config: string } } = {};
  const fake = await fakeServer((req, res) => {
    const current = state.current;
    if (req.url === '/v2/') return void res.writeHead(200).end();
    if (current === undefined) return void res.writeHead(404).end();
    if (req.url?.includes('/manifests/')) {
      res.writeHead(200, {
        'content-type': 'application/vnd.oci.image.manifest.v1+json',
        'docker-content-digest': digestOf(current.manifest),
      });
      return void res.end(current.manifest);
    }
    if (req.url?.endsWith(`/blobs/${digestOf(current.config)}`))
      return void res.writeHead(200).end(current.config);
    res.writeHead(404).end();
  });
  t.teardown(() => fake.close());
  const configuration: PrebuildConfiguration = {
    repository: 'https://git.example.com/org/app.git',
    branches: ['main'],
    image: { registry: fake.host, name: 'org/app' },
    refreshOnBaseChange: true,
  };
  const client = new RegistryClient({ insecureRegistries: [fake.host] });
  const commits = new BranchImageCommits(() => ({
    client,
    insecureRegistries: [fake.host],
    registryAuth: undefined,
  }));
  const reads = () =>
    fake.requests
      .filter((r) => r.url !== '/v2/')
      .map((r) => r.url.replace(/.*\/(manifests|blobs)\/.*/, '$1'));
  return { state, fake, configuration, commits, reads };
}

test('a branch whose image did not move costs one manifest read per pass', async (t) => {
  const { state, fake, configuration, commits, reads } = await setup(t);
  state.current = image('a'.repeat(40));
  t.is(await commits.of('0 main', configuration, 'main'), 'a'.repeat(40));
  t.deepEqual(reads(), ['manifests', 'blobs']);
  fake.requests.length = 0;
  t.is(await commits.of('0 main', configuration, 'main'), 'a'.repeat(40));
  t.is(await commits.of('0 main', configuration, 'main'), 'a'.repeat(40));
  t.deepEqual(reads(), ['manifests', 'manifests']);
});

test('a moved branch tag is read through to its new commit', async (t) => {
  const { state, fake, configuration, commits, reads } = await setup(t);
  state.current = image('a'.repeat(40));
  await commits.of('0 main', configuration, 'main');
  state.current = image('b'.repeat(40));
  fake.requests.length = 0;
  t.is(await commits.of('0 main', configuration, 'main'), 'b'.repeat(40));
  t.deepEqual(reads(), ['manifests', 'blobs']);
});

test('a branch with no image has no commit, and one that appears later is read', async (t) => {
  const { state, configuration, commits } = await setup(t);
  t.is(await commits.of('0 main', configuration, 'main'), undefined);
  state.current = image('c'.repeat(40));
  t.is(await commits.of('0 main', configuration, 'main'), 'c'.repeat(40));
  state.current = undefined;
  t.is(await commits.of('0 main', configuration, 'main'), undefined);
});
