// Prebuilds benchmark (needs the stack: `npm run stack -- up`; `npm run bench:prebuilds`).
//   - webhook to build start: a real push, then a GitHub-signed webhook; the time until the 202
//     (the prebuild is recorded, listed by GET /builds), median of SAMPLES, without and with a
//     `paths` filter (which adds the service's own fetch of both trees), in one run;
//   - one reconcile pass over REPOSITORIES configured repositories whose branch images are up to
//     date: wall time, and registry requests per repository (through a counting proxy) beside the
//     one read of the branches per repository.
import { randomBytes } from 'node:crypto';
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import type { PrebuildConfiguration } from '../src/config/types.js';
import { MemoryDeliveryLog } from '../src/prebuilds/deliveries.js';
import { createLogger } from '../src/observability/logger.js';
import { Metrics } from '../src/observability/metrics.js';
import { ProcessGroups } from '../src/exec/process-groups.js';
import { RegistryClient } from '../src/registry/client.js';
import { testConfig } from '../test/helpers/app.js';
import { startBuildApp, stack } from '../test/helpers/build-support.js';
import { eventually } from '../test/helpers/eventually.js';
import { githubHook, githubPush } from '../test/helpers/prebuild-support.js';
import { pushedRepo } from '../test/helpers/pushed-repo.js';
import { countingProxy } from '../test/helpers/registry-counting-proxy.js';
import { Prebuilds } from '../workers/prebuilds/prebuilds.js';
import { remoteBranchListing } from '../workers/prebuilds/branch-listing.js';
import { Reconciler } from '../workers/prebuilds/reconcile.js';
import { BranchImageCommits } from '../workers/prebuilds/branch-commits.js';
import { Writable } from 'node:stream';

const SAMPLES = 11;
const REPOSITORIES = 100;
const secret = randomBytes(16).toString('hex');
const creds = { username: stack.GIT_HTTPS_USER, token: stack.GIT_HTTPS_PASSWORD };

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
};

async function webhookToStart(): Promise<void> {
  const plain = await pushedRepo('bench-pb');
  const filtered = await pushedRepo('bench-pb-paths');
  const conf = (url: string, paths?: string[]): PrebuildConfiguration => ({
    repository: url,
    branches: ['main'],
    ...(paths === undefined ? {} : { paths }),
    image: { registry: stack.REGISTRY_ANON, name: `bench/prebuild-${randomBytes(4).toString('hex')}` },
    refreshOnBaseChange: false,
  });
  const app = await startBuildApp({
    gitCredentials: [{ host: '127.0.0.1', kind: 'https', ...creds }],
    prebuilds: {
      configurations: [conf(plain.url), conf(filtered.url, ['.devcontainer/**'])],
      reconcileIntervalSeconds: 86_400,
      refreshIntervalSeconds: 86_400,
      hookSecrets: { github: secret },
    },
  });
  try {
    for (const [label, repo] of [
      ['no paths filter', plain],
      ['paths filter (both trees fetched)', filtered],
    ] as const) {
      const times: number[] = [];
      for (let i = 0; i < SAMPLES; i += 1) {
        const definition = JSON.stringify({ image: stack.BASE_IMAGE_ANON, containerEnv: { N: `${i}` } });
        const commits = await repo.push('main', { '.devcontainer/devcontainer.json': definition });
        const started = performance.now();
        const answer = await githubHook(app.url, secret, githubPush(repo, 'main', commits));
        times.push(performance.now() - started);
        if (answer.status !== 202)
          throw new Error(`webhook answered ${answer.status}: ${JSON.stringify(answer.body)}`);
      }
      console.log(
        `webhook to build start, ${label}: median ${median(times).toFixed(0)} ms (n=${SAMPLES}, min ${Math.min(...times).toFixed(0)}, max ${Math.max(...times).toFixed(0)})`,
      );
    }
    // The last prebuilds end (the earlier ones were superseded) before the app stops.
    await eventually(
      async () =>
        ((await (await fetch(`${app.url}/builds?status=running`)).json()) as { builds: unknown[] }).builds
          .length === 0,
      { timeout: 600_000, interval: 500, what: 'the prebuilds to end' },
    );
  } finally {
    await app.close();
    await plain.dispose();
    await filtered.dispose();
  }
}

/** Puts an up-to-date branch image `<name>:main` (no layers, its revision label `commit`) straight into the registry. */
async function seedBranchImage(name: string, commit: string): Promise<void> {
  const base = `http://${stack.REGISTRY_ANON}/v2/${name}`;
  const config = Buffer.from(
    JSON.stringify({
      architecture: 'amd64',
      os: 'linux',
      config: { Labels: { 'org.opencontainers.image.revision': commit } },
      rootfs: { type: 'layers', diff_ids: [] },
    }),
  );
  const digest = `sha256:${createHash('sha256').update(config).digest('hex')}`;
  const upload = await fetch(`${base}/blobs/uploads/`, { method: 'POST' });
  const location = new URL(upload.headers.get('location') ?? '', `http://${stack.REGISTRY_ANON}`);
  location.searchParams.set('digest', digest);
  const put = await fetch(location, {
    method: 'PUT',
    body: config,
    headers: { 'content-type': 'application/octet-stream' },
  });
  if (put.status !== 201) throw new Error(`blob upload answered ${put.status}`);
  const manifest = JSON.stringify({
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest, size: config.length },
    layers: [],
  });
  const res = await fetch(`${base}/manifests/main`, {
    method: 'PUT',
    body: manifest,
    headers: { 'content-type': 'application/vnd.oci.image.manifest.v1+json' },
  });
  if (res.status !== 201) throw new Error(`manifest put answered ${res.status}`);
}

async function reconcilePass(): Promise<void> {
  const source = await pushedRepo('bench-reconcile');
  const { after } = await source.push('main', { 'README.md': 'reconcile bench\n' });
  const run = randomBytes(4).toString('hex');
  const names = Array.from({ length: REPOSITORIES }, (_, i) => `it-bench-reconcile-${run}-${i}`);
  for (const name of names)
    await cp(join(stack.GIT_REPOS_DIR, `${source.name}.git`), join(stack.GIT_REPOS_DIR, `${name}.git`), {
      recursive: true,
    });
  for (const name of names) await seedBranchImage(`bench/reconcile-${run}-${name}`, after);
  const proxy = await countingProxy(stack.REGISTRY_ANON);
  const scratch = (await import('node:fs/promises')).mkdtemp;
  const config = testConfig({
    scratchDir: await scratch(join((await import('node:os')).tmpdir(), 'ibs-bench-pb-')),
    insecureRegistries: [proxy.host, stack.REGISTRY_ANON],
    gitCredentials: [{ host: '127.0.0.1', kind: 'https', ...creds }],
    childEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_SSL_CAINFO: stack.GIT_CA_FILE },
    prebuilds: {
      configurations: names.map((name) => ({
        repository: `${stack.GIT_HTTPS_URL}/${name}.git`,
        branches: ['main'],
        image: { registry: proxy.host, name: `bench/reconcile-${run}-${name}` },
        refreshOnBaseChange: false,
      })),
      reconcileIntervalSeconds: 300,
      refreshIntervalSeconds: 21_600,
      hookSecrets: {},
    },
  });
  const logger = createLogger({
    serviceName: 'bench',
    environment: 'bench',
    destination: new Writable({ write: (_c, _e, cb) => cb() }),
  });
  let started = 0;
  const prebuilds = new Prebuilds({
    config,
    logger,
    metrics: new Metrics(),
    groups: new ProcessGroups(),
    builds: {
      start: () => {
        started += 1;
        return Promise.resolve({ id: 'none' });
      },
      cancel: () => Promise.resolve(),
      ended: () => Promise.resolve(false),
    },
    deliveries: new MemoryDeliveryLog(),
    registry: new RegistryClient({ insecureRegistries: config.insecureRegistries }),
  });
  const listing = remoteBranchListing(prebuilds, { config, groups: new ProcessGroups() }, 0);
  const reconciler = new Reconciler(prebuilds, listing, new BranchImageCommits(() => prebuilds.tagAccess));
  try {
    const t0 = performance.now();
    await reconciler.pass(logger);
    const seconds = (performance.now() - t0) / 1000;
    if (started !== 0) throw new Error(`${started} builds started: the branch images were not up to date`);
    console.log(
      `reconcile pass over ${REPOSITORIES} repositories (all up to date): ${seconds.toFixed(2)} s, ${((seconds * 1000) / REPOSITORIES).toFixed(0)} ms per repository`,
    );
    console.log(
      `requests per repository: 1 branch listing, ${(proxy.requests.length / REPOSITORIES).toFixed(2)} registry requests (${proxy.requests.length} in all, ${proxy.connections()} TCP connections)`,
    );
  } finally {
    await proxy.close();
    await source.dispose();
    const { rm } = await import('node:fs/promises');
    for (const name of names)
      await rm(join(stack.GIT_REPOS_DIR, `${name}.git`), { recursive: true, force: true });
  }
}

await webhookToStart();
await reconcilePass();
