/**
 * Layer compression on the real stack (BuildKit, registry, cosign): a zstd build's layers carry
 * the zstd OCI media type, GET /devcontainer reads the image and cosign verifies its signature;
 * an estargz build's layers carry the TOC annotation; a reuse keeps the compression of the image
 * it reuses, and a request for another compression builds.
 */
import test, { type ExecutionContext } from 'ava';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { loadSigningKey } from '../../src/config/signing-key.js';
import type { RunningApp } from '../helpers/app.js';
import {
  fetchLog,
  httpsCreds,
  postBuild,
  stack,
  startBuildApp,
  uniqueName,
  type BuildResponse,
} from '../helpers/build-support.js';
import { testRepo } from '../helpers/reuse-support.js';
import { toolEnv } from '../helpers/tool-env.js';
import { MANIFEST_ACCEPT, registryFetch } from '../stack/registry-client.js';

const REGISTRY = stack.REGISTRY_ANON;
const ZSTD = 'application/vnd.oci.image.layer.v1.tar+zstd';
const GZIP = 'application/vnd.oci.image.layer.v1.tar+gzip';
const TOC = 'containerd.io/snapshot/stargz/toc.digest';

interface Layer {
  mediaType: string;
  annotations?: Record<string, string>;
}

/** The layers of the linux image of `name@digest`. */
async function layers(name: string, digest: string): Promise<Layer[]> {
  const get = async (ref: string) =>
    (await (
      await registryFetch(REGISTRY, `/v2/${name}/manifests/${ref}`, { headers: { accept: MANIFEST_ACCEPT } })
    ).json()) as { manifests?: Array<{ digest: string; platform?: { os: string } }>; layers?: Layer[] };
  const top = await get(digest);
  const linux = top.manifests?.find((m) => m.platform?.os === 'linux');
  return ((linux === undefined ? top : await get(linux.digest)).layers ?? []) as Layer[];
}

async function built(t: ExecutionContext, app: RunningApp, res: BuildResponse): Promise<string> {
  const log = await fetchLog(app, res.body.imageBuildLogId ?? res.body.logId);
  if (res.status !== 200)
    t.fail(`POST /build answered ${res.status} ${JSON.stringify(res.body)}\n${log.text}`);
  return log.text;
}

const definition = (line: string): Record<string, string> => ({
  '.devcontainer/devcontainer.json': JSON.stringify({
    build: { dockerfile: 'Dockerfile' },
    customizations: { vscode: { extensions: ['ibs.compression'] } },
  }),
  '.devcontainer/Dockerfile': `FROM ${stack.BASE_IMAGE_ANON}\nRUN echo ${line} > /etc/compression\n`,
});

test('zstd layers: OCI media type, read by GET /devcontainer, signed; a reuse keeps them; gzip builds', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ibs-compression-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  await writeFile(join(dir, 'k.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  await writeFile(join(dir, 'k.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
  const signing = loadSigningKey(join(dir, 'k.key'), undefined);
  if (typeof signing === 'string') return t.fail(signing);
  const app = await startBuildApp({ build: { reuse: true }, signing });
  t.teardown(app.close);
  const repo = await testRepo('compression');
  t.teardown(repo.dispose);
  const name = uniqueName('compression');
  const body = {
    repository: repo.url,
    gitCredentials: httpsCreds(),
    image: { registry: REGISTRY, name },
    buildOptions: { compression: 'zstd' },
  };
  await repo.commit(definition(`zstd-${name}`));
  const zstd = await postBuild(app, body);
  await built(t, app, zstd);
  const zstdLayers = await layers(name, String(zstd.body.digest));
  t.true(zstdLayers.length > 0);
  t.true(
    zstdLayers.every((l) => l.mediaType === ZSTD),
    JSON.stringify(zstdLayers.map((l) => l.mediaType)),
  );

  const described = await fetch(
    `${app.url}/devcontainer?registry=${REGISTRY}&name=${name}&tag=${String(zstd.body.tag)}`,
  );
  t.is(described.status, 200, await described.clone().text());
  t.true(JSON.stringify(await described.json()).includes('ibs.compression'));

  const verified = await execa(
    stack.COSIGN_BIN,
    [
      'verify',
      '--key',
      join(dir, 'k.pub'),
      '--insecure-ignore-tlog=true',
      '--allow-insecure-registry=true',
      `${REGISTRY}/${name}@${String(zstd.body.digest)}`,
    ],
    { reject: false, env: toolEnv(dir, { DOCKER_CONFIG: join(dir, 'cosign') }), extendEnv: false },
  );
  t.is(verified.exitCode, 0, verified.stderr);

  // A new commit, same inputs: reused with its zstd layers. Asked for gzip: another key, a build.
  await repo.commit({ 'README.md': '# moved\n' });
  const reused = await postBuild(app, body);
  t.regex(await built(t, app, reused), /reused, no build/);
  t.true((await layers(name, String(reused.body.digest))).every((l) => l.mediaType === ZSTD));
  const gzip = await postBuild(app, { ...body, buildOptions: { compression: 'gzip' } });
  const gzipLog = await built(t, app, gzip);
  t.true(gzipLog.includes('devcontainer build'), gzipLog);
  const gzipLayers = await layers(name, String(gzip.body.digest));
  t.true(
    gzipLayers.every((l) => l.mediaType.endsWith('gzip')),
    JSON.stringify(gzipLayers.map((l) => l.mediaType)),
  );
});

test('estargz layers carry the TOC annotation', async (t) => {
  const app = await startBuildApp({ build: { reuse: false, compression: 'estargz' } });
  t.teardown(app.close);
  const repo = await testRepo('estargz');
  t.teardown(repo.dispose);
  const name = uniqueName('estargz');
  await repo.commit(definition(`estargz-${name}`));
  const res = await postBuild(app, {
    repository: repo.url,
    gitCredentials: httpsCreds(),
    image: { registry: REGISTRY, name },
  });
  await built(t, app, res);
  const found = await layers(name, String(res.body.digest));
  t.true(found.length > 0);
  t.true(
    found.every((l) => l.mediaType === GZIP && typeof l.annotations?.[TOC] === 'string'),
    JSON.stringify(found),
  );
});
