// Retention benchmark (`npm run bench:retention`; needs bookworm's docker-registry, no stack).
//
// A registry process of its own (own port, own storage, delete on: the shared stack's registries
// are never garbage-collected) holds 200 images as the service writes them: an index with a
// platform manifest and an attestation manifest, a config carrying the retention labels (20
// branches of 10 images), one layer of its own plus a shared base layer, a cosign signature tag,
// and a build-key tag on every tenth. Through a counting proxy: a plan, then a run in delete mode
// (keep the newest 2 per branch, served rule off): time and registry requests per image; the
// storage before, after the run, and after `docker-registry garbage-collect`.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { PUSH_ACTIONS, RegistryClient, type RegistryCall, sha256 } from '../src/registry/client.js';
import { MEDIA_TYPES } from '../src/registry/manifest.js';
import { putManifest, uploadBlob } from '../src/registry/push.js';
import { parseReference } from '../src/registry/reference.js';
import { Retention } from '../src/retention/retention.js';
import { MemoryServedStore } from '../src/retention/served.js';
import { IMAGE_LABELS } from '../src/rules/image-labels.js';
import { createLogger } from '../src/observability/logger.js';
import { Metrics } from '../src/observability/metrics.js';
import { startOwnRegistry } from '../test/helpers/own-registry.js';
import { countingProxy } from '../test/helpers/registry-counting-proxy.js';

const IMAGES = 200;
const BRANCHES = 20;
const NAME = 'bench/retention';
const OWN_LAYER_BYTES = 256 * 1024;
const BASE_LAYER_BYTES = 1024 * 1024;
const LAYER = 'application/vnd.oci.image.layer.v1.tar+gzip';
const CONFIG = 'application/vnd.oci.image.config.v1+json';

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));
const descriptor = (mediaType: string, body: Buffer) => ({
  mediaType,
  digest: sha256(body),
  size: body.length,
});

/** One image as the service writes it; returns nothing (tags: sha-<i>, its .sig, a build-key on every tenth). */
async function pushImage(client: RegistryClient, call: RegistryCall, i: number, base: Buffer): Promise<void> {
  const own = randomBytes(OWN_LAYER_BYTES);
  const key = randomBytes(32).toString('hex');
  const config = json({
    architecture: 'amd64',
    os: 'linux',
    config: {
      Labels: {
        'org.opencontainers.image.source': 'https://git.example/bench.git',
        [IMAGE_LABELS.branch]: `branch-${i % BRANCHES}`,
        [IMAGE_LABELS.built]: new Date(Date.now() - (IMAGES - i) * 60_000).toISOString(),
        [IMAGE_LABELS.namedTag]: '',
        [IMAGE_LABELS.buildKey]: key,
      },
    },
    rootfs: { type: 'layers', diff_ids: [sha256(base), sha256(own)] },
  });
  for (const [body, type] of [
    [base, LAYER],
    [own, LAYER],
    [config, CONFIG],
  ] as const)
    await uploadBlob(client, call, body, type, { probe: false });
  const image = json({
    schemaVersion: 2,
    mediaType: MEDIA_TYPES.ociManifest,
    config: descriptor(CONFIG, config),
    layers: [descriptor(LAYER, base), descriptor(LAYER, own)],
  });
  const statement = json({ _type: 'https://in-toto.io/Statement/v1', subject: [{ digest: sha256(image) }] });
  await uploadBlob(client, call, statement, 'application/vnd.in-toto+json', { probe: false });
  const empty = json({});
  await uploadBlob(client, call, empty, CONFIG, { probe: false });
  const attestation = json({
    schemaVersion: 2,
    mediaType: MEDIA_TYPES.ociManifest,
    config: descriptor(CONFIG, empty),
    layers: [descriptor('application/vnd.in-toto+json', statement)],
  });
  await putManifest(client, call, sha256(image), image, MEDIA_TYPES.ociManifest);
  await putManifest(client, call, sha256(attestation), attestation, MEDIA_TYPES.ociManifest);
  const index = json({
    schemaVersion: 2,
    mediaType: MEDIA_TYPES.ociIndex,
    manifests: [
      { ...descriptor(MEDIA_TYPES.ociManifest, image), platform: { os: 'linux', architecture: 'amd64' } },
      {
        ...descriptor(MEDIA_TYPES.ociManifest, attestation),
        platform: { os: 'unknown', architecture: 'unknown' },
        annotations: {
          'vnd.docker.reference.type': 'attestation-manifest',
          'vnd.docker.reference.digest': sha256(image),
        },
      },
    ],
  });
  await putManifest(client, call, `sha-${i}`, index, MEDIA_TYPES.ociIndex);
  const signature = json({
    schemaVersion: 2,
    mediaType: MEDIA_TYPES.ociManifest,
    config: descriptor(CONFIG, empty),
    layers: [{ ...descriptor('application/vnd.in-toto+json', statement), annotations: { sig: String(i) } }],
  });
  await putManifest(
    client,
    call,
    `${sha256(index).replace(':', '-')}.sig`,
    signature,
    MEDIA_TYPES.ociManifest,
  );
  if (i % 10 === 0) await putManifest(client, call, `build-key-${key}`, index, MEDIA_TYPES.ociIndex);
}

const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

async function main(): Promise<void> {
  const registry = await startOwnRegistry();
  const proxy = await countingProxy(registry.host);
  const client = new RegistryClient({ insecureRegistries: [registry.host, proxy.host] });
  try {
    const ref = parseReference({ registry: registry.host, name: NAME, tag: 'latest' }, [registry.host]);
    const call: RegistryCall = { ref, credentials: undefined, actions: PUSH_ACTIONS };
    const base = randomBytes(BASE_LAYER_BYTES);
    for (let i = 0; i < IMAGES; i += 1) await pushImage(client, call, i, base);
    const before = await registry.storageBytes();
    const retention = new Retention({
      settings: {
        mode: 'delete',
        keepPerBranch: 2,
        keepServedDays: 0,
        keepTags: [],
        intervalMinutes: 60,
        repositories: [`${proxy.host}/${NAME}`],
      },
      insecureRegistries: [proxy.host],
      registryAuth: { auths: {} },
      store: new MemoryServedStore(),
      metrics: new Metrics(),
      logger: createLogger({
        serviceName: 'bench',
        environment: 'bench',
        destination: new Writable({ write: (_chunk, _enc, cb) => cb() }),
      }),
    });
    proxy.reset();
    let started = performance.now();
    const plan = await retention.plan();
    const planMs = performance.now() - started;
    const planRequests = proxy.requests.length;
    proxy.reset();
    started = performance.now();
    const run = await retention.run();
    const runMs = performance.now() - started;
    const runRequests = proxy.requests.length;
    const images = run?.repositories[0]?.images ?? [];
    const deleted = images.filter((i) => i.outcome === 'deleted').length;
    const after = await registry.storageBytes();
    await registry.collectGarbage();
    const collected = await registry.storageBytes();
    const planned = plan.repositories[0]?.images.length ?? 0;
    console.log(
      `images: ${planned} (${BRANCHES} branches), kept ${images.length - deleted}, deleted ${deleted}`,
    );
    console.log(
      `plan: ${(planMs / 1000).toFixed(2)} s, ${planRequests} registry requests (${(planRequests / planned).toFixed(2)} per image)`,
    );
    console.log(
      `run (plan + deletes): ${(runMs / 1000).toFixed(2)} s, ${runRequests} registry requests (${(runRequests / planned).toFixed(2)} per image)`,
    );
    console.log(
      `storage: before ${mib(before)}, after the run ${mib(after)}, after garbage-collect ${mib(collected)}`,
    );
    retention.client.close();
  } finally {
    client.close();
    await proxy.close();
    await registry.dispose();
  }
}

await main();
