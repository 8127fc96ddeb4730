// The prebuild schedules on the real stack: a head moved with no webhook builds at the next
// reconcile, and a base image of the test's own republished under the same tag rebuilds the
// branch at the next refresh, the log naming the base and both digests.
import { randomBytes } from 'node:crypto';
import test from 'ava';
import type { BuildRecord } from '../../src/builds/types.js';
import type { RunningApp } from '../helpers/app.js';
import { postBuild, startBuildApp, stack } from '../helpers/build-support.js';
import { eventually } from '../helpers/eventually.js';
import { tagDigest } from '../helpers/prebuild-support.js';
import { pushedRepo, type PushedRepo } from '../helpers/pushed-repo.js';

const INTERVAL_SECONDS = 3;
const creds = { username: stack.GIT_HTTPS_USER, token: stack.GIT_HTTPS_PASSWORD };
let app: RunningApp;
let appRepo: PushedRepo;
let baseRepo: PushedRepo;
const suffix = randomBytes(4).toString('hex');
const baseName = `it/prebuild-base-${suffix}`;
const baseRef = `${stack.REGISTRY_ANON}/${baseName}:1`;
const imageName = `it/prebuild-sched-${suffix}`;

/** Builds and pushes the test's own base image `<anon>/<baseName>:1` (version `v`) through a real build. */
async function publishBase(version: string): Promise<string> {
  await baseRepo.push('main', {
    '.devcontainer/devcontainer.json': JSON.stringify({ build: { dockerfile: 'Dockerfile' } }),
    '.devcontainer/Dockerfile': `FROM ${stack.BASE_IMAGE_ANON}\nRUN echo ${version}-${suffix} > /base-version\n`,
  });
  const answer = await postBuild(app, {
    repository: baseRepo.url,
    branch: 'main',
    gitCredentials: creds,
    image: { registry: stack.REGISTRY_ANON, name: baseName, tag: '1' },
  });
  if (answer.status !== 200)
    throw new Error(`base build answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  const digest = await tagDigest(stack.REGISTRY_ANON, baseName, '1');
  if (digest === undefined) throw new Error('no base image');
  return digest;
}

test.before(async () => {
  appRepo = await pushedRepo('pb-sched');
  baseRepo = await pushedRepo('pb-base');
  app = await startBuildApp({
    gitCredentials: [{ host: '127.0.0.1', kind: 'https', ...creds }],
    prebuilds: {
      configurations: [
        {
          repository: appRepo.url,
          branches: ['main'],
          image: { registry: stack.REGISTRY_ANON, name: imageName },
          refreshOnBaseChange: true,
        },
      ],
      reconcileIntervalSeconds: INTERVAL_SECONDS,
      refreshIntervalSeconds: INTERVAL_SECONDS,
      hookSecrets: {},
    },
  });
});

test.after.always(async () => {
  await app?.close();
  await appRepo?.dispose();
  await baseRepo?.dispose();
});

async function builds(): Promise<BuildRecord[]> {
  const res = await fetch(`${app.url}/builds`);
  return ((await res.json()) as { builds: BuildRecord[] }).builds;
}

/** The first finished build of the app repository with `trigger` on `commit` (generous bound: builds queue on a loaded machine). */
const finishedBuild = (trigger: string, commit: string, after = ''): Promise<BuildRecord> =>
  eventually(
    async () =>
      (await builds()).find(
        (b) =>
          b.repository === appRepo.url &&
          b.trigger === trigger &&
          b.commit === commit &&
          b.phase === 'finished' &&
          b.startedAt > after,
      ),
    { timeout: 600_000, interval: 500, what: `a finished ${trigger} build of ${commit}` },
  );

test('a head moved without a webhook builds at reconcile; a republished base image rebuilds at refresh', async (t) => {
  const oldBase = await publishBase('v1');
  const first = await appRepo.push('main', {
    '.devcontainer/devcontainer.json': JSON.stringify({ image: baseRef }),
  });
  const reconciled = await finishedBuild('reconcile', first.after);
  t.is(reconciled.status, 'success');
  const builtDigest = await tagDigest(stack.REGISTRY_ANON, imageName, `sha-${first.after.slice(0, 7)}`);
  await eventually(async () => (await tagDigest(stack.REGISTRY_ANON, imageName, 'main')) === builtDigest, {
    timeout: 30_000,
    what: 'the branch tag main',
  });

  const moved = await appRepo.push('main', { 'README.md': 'a head moved with no webhook\n' });
  t.is((await finishedBuild('reconcile', moved.after)).status, 'success');

  const newBase = await publishBase('v2');
  t.not(newBase, oldBase);
  const refreshed = await finishedBuild('refresh', moved.after);
  t.is(refreshed.status, 'success');
  const change = `base image ${baseRef}: ${oldBase} -> ${newBase}`;
  t.true(app.logText().includes(change), 'the log names the base image and both digests');
  const deliveries = (
    (await (await fetch(`${app.url}/hooks/deliveries`)).json()) as {
      deliveries: { trigger: string; reason: string; buildId?: string }[];
    }
  ).deliveries;
  const delivery = deliveries.find((d) => d.trigger === 'refresh' && d.buildId === refreshed.id);
  t.truthy(delivery);
  t.true(delivery?.reason.startsWith('refresh: base image changed'));
  t.true(delivery?.reason.includes(change));
});
