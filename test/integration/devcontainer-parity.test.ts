// CLI parity of the devcontainer merge: for each label fixture, an image carrying that
// `devcontainer.metadata` label is pushed to the stack's anonymous registry (over the registry
// HTTP API v2), the real Dev Containers CLI reads it with
// `devcontainer read-configuration --include-merged-configuration` on a workspace whose
// devcontainer.json is just {"image": ...}, and its `mergedConfiguration` (minus `image` and
// `configFilePath`) must equal the service's `configuration` for the same label.
//
// Two facts about the CLI (0.89.0) shape this test:
// - it reads an image's config from the registry itself, but speaks plain HTTP only to a
//   registry whose host name is `localhost`: the image is pushed to 127.0.0.1:P and the CLI is
//   given `localhost:P/...` (the same registry);
// - before that it runs `docker ps` (looking for an existing container) and fails if that
//   fails, so it runs against the stack's own engine (DOCKER_HOST = STACK_DOCKER_HOST). The
//   image is not in that engine, so the CLI falls through to reading the registry.
import test from 'ava';
import { execa } from 'execa';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describeDevcontainer, parseMetadataLabel } from '../../src/devcontainer/index.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { stackEnv } from '../stack/env.js';
import { metricValue } from '../helpers/metrics.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'devcontainer-labels');
const CLI = join(import.meta.dirname, '..', '..', 'node_modules', '.bin', 'devcontainer');

interface Fixture {
  description: string;
  label: unknown;
}

const digestOf = (bytes: Buffer): string => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

async function pushBlob(
  registry: string,
  name: string,
  bytes: Buffer,
): Promise<{ digest: string; size: number }> {
  const digest = digestOf(bytes);
  const start = await fetch(`http://${registry}/v2/${name}/blobs/uploads/`, { method: 'POST' });
  const location = start.headers.get('location');
  if (start.status !== 202 || !location) throw new Error(`blob upload start answered ${start.status}`);
  const url = new URL(location, `http://${registry}`);
  url.searchParams.set('digest', digest);
  const put = await fetch(url, {
    method: 'PUT',
    body: bytes,
    headers: { 'content-type': 'application/octet-stream' },
  });
  if (put.status !== 201) throw new Error(`blob upload answered ${put.status}`);
  return { digest, size: bytes.length };
}

/** Pushes a one-layer linux/amd64 image whose config carries the label; docker schema2 manifest. */
async function pushLabelledImage(registry: string, name: string, tag: string, label: string): Promise<void> {
  const tar = Buffer.alloc(1024); // an empty tar archive: two zero blocks
  const layer = await pushBlob(registry, name, gzipSync(tar));
  const config = await pushBlob(
    registry,
    name,
    Buffer.from(
      JSON.stringify({
        architecture: 'amd64',
        os: 'linux',
        config: { Labels: { 'devcontainer.metadata': label } },
        rootfs: { type: 'layers', diff_ids: [digestOf(tar)] },
      }),
    ),
  );
  const mediaType = 'application/vnd.docker.distribution.manifest.v2+json';
  const manifest = {
    schemaVersion: 2,
    mediaType,
    config: { mediaType: 'application/vnd.docker.container.image.v1+json', ...config },
    layers: [{ mediaType: 'application/vnd.docker.image.rootfs.diff.tar.gzip', ...layer }],
  };
  const put = await fetch(`http://${registry}/v2/${name}/manifests/${tag}`, {
    method: 'PUT',
    body: JSON.stringify(manifest),
    headers: { 'content-type': mediaType },
  });
  if (put.status !== 201) throw new Error(`manifest push answered ${put.status}: ${await put.text()}`);
}

/** The CLI's mergedConfiguration for an image, minus `image` and `configFilePath`. */
async function cliMergedConfiguration(image: string, dockerHost: string): Promise<Record<string, unknown>> {
  const scratch = await mkdtemp(join(tmpdir(), 'ibs-parity-'));
  const workspace = join(scratch, 'workspace');
  // TMPDIR too: the CLI keeps a cache in <TMPDIR>/devcontainercli-<user>, removed with `scratch`.
  const tmp = join(scratch, 'tmp');
  try {
    await mkdir(join(workspace, '.devcontainer'), { recursive: true });
    await mkdir(tmp);
    await writeFile(join(workspace, '.devcontainer', 'devcontainer.json'), JSON.stringify({ image }));
    const { stdout } = await execa(
      CLI,
      ['read-configuration', '--workspace-folder', workspace, '--include-merged-configuration'],
      { env: { DOCKER_HOST: dockerHost, TMPDIR: tmp }, timeout: 120_000 },
    );
    const merged = (JSON.parse(stdout) as { mergedConfiguration: Record<string, unknown> })
      .mergedConfiguration;
    const { image: _image, configFilePath: _path, ...rest } = merged;
    return rest;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

const fixtureFiles = (await readdir(FIXTURES)).filter((f) => f.endsWith('.json')).sort();

test('at least 20 label fixtures', (t) => {
  t.true(fixtureFiles.length >= 20, `${fixtureFiles.length} fixtures`);
});

let app: RunningApp;
test.before(async () => {
  app = await startApp({ insecureRegistries: [stackEnv().REGISTRY_ANON] });
});
test.after.always(async () => {
  await app?.close();
});

for (const file of fixtureFiles) {
  const caseName = file.replace(/\.json$/, '');
  test.serial(`CLI parity: ${caseName}`, async (t) => {
    const env = stackEnv();
    const fixture = JSON.parse(await readFile(join(FIXTURES, file), 'utf8')) as Fixture;
    const label = JSON.stringify(fixture.label);
    const name = `parity/${caseName}`;
    await pushLabelledImage(env.REGISTRY_ANON, name, '1', label);

    const port = env.REGISTRY_ANON.slice(env.REGISTRY_ANON.lastIndexOf(':') + 1);
    const cli = await cliMergedConfiguration(`localhost:${port}/${name}:1`, env.STACK_DOCKER_HOST);
    // What a client of the service sees: the configuration as JSON.
    const ours = JSON.parse(
      JSON.stringify(describeDevcontainer(parseMetadataLabel(label)).configuration),
    ) as unknown;

    t.deepEqual(ours, cli, fixture.description);
    // And end to end: GET /devcontainer reads the same label from the registry and answers the same.
    const res = await fetch(
      `${app.url}/devcontainer?registry=${encodeURIComponent(env.REGISTRY_ANON)}&name=${name}&tag=1`,
    );
    t.is(res.status, 200);
    const served = (await res.json()) as { configuration: unknown; metadata: unknown };
    t.deepEqual(served.configuration, cli, `GET /devcontainer: ${fixture.description}`);
    // Not vacuous: the CLI really read the label (every fixture sets at least one field).
    t.not(JSON.stringify(cli), JSON.stringify(describeDevcontainer([{}]).configuration));
  });
}

test.serial('the empty label array: 200 with the CLI merge of no entries, counted found', async (t) => {
  const env = stackEnv();
  const name = 'parity/empty-array';
  await pushLabelledImage(env.REGISTRY_ANON, name, '1', '[]');
  const port = env.REGISTRY_ANON.slice(env.REGISTRY_ANON.lastIndexOf(':') + 1);
  const cli = await cliMergedConfiguration(`localhost:${port}/${name}:1`, env.STACK_DOCKER_HOST);
  const foundBefore = await lookupCount('found');

  const res = await fetch(
    `${app.url}/devcontainer?registry=${encodeURIComponent(env.REGISTRY_ANON)}&name=${name}&tag=1`,
  );
  t.is(res.status, 200);
  const served = (await res.json()) as { configuration: Record<string, unknown>; metadata: unknown };
  // The one deliberate difference (docs/behaviour.md, Known limits): over no entries the CLI's maximum of
  // host requirements is -Infinity, which the service leaves out rather than answer.
  const { hostRequirements: cliHostRequirements, ...cliRest } = cli;
  t.deepEqual(cliHostRequirements, { cpus: null, memory: '-Infinity', storage: '-Infinity' });
  t.deepEqual(served.configuration, cliRest);
  t.deepEqual(served.metadata, []);
  t.like(served.configuration, {
    init: false,
    privileged: false,
    onCreateCommands: [],
    postCreateCommands: [],
    remoteEnv: {},
    containerEnv: {},
  });
  t.is(await lookupCount('found'), foundBefore + 1);
});

/** service_devcontainer_lookups_total{result} as /metrics shows it. */
const lookupCount = (result: string): Promise<number> =>
  metricValue(app.url, 'service_devcontainer_lookups_total', { result });
