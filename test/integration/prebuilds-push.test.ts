// Prebuilds on push, on the real stack: real git pushes to the stack's git server, GitHub-signed
// webhooks, real builds on BuildKit and the branch tag read back from the registry.
import { randomBytes } from 'node:crypto';
import test from 'ava';
import type { BuildRecord } from '../../src/builds/types.js';
import type { PrebuildConfiguration } from '../../src/config/types.js';
import type { RunningApp } from '../helpers/app.js';
import { startBuildApp, stack } from '../helpers/build-support.js';
import { eventually } from '../helpers/eventually.js';
import { metricValue } from '../helpers/metrics.js';
import { githubHook, githubPush, githubSignature, sendHook, tagDigest } from '../helpers/prebuild-support.js';
import { pushedRepo, ZERO, type PushedRepo } from '../helpers/pushed-repo.js';
import { SLOW_FIXTURE_DOCKERFILE } from '../stack/fixtures.js';

const secret = `canary-github-${randomBytes(6).toString('hex')}`;
const gitlabToken = `canary-gitlab-${randomBytes(6).toString('hex')}`;
const repos: Record<string, PushedRepo> = {};
let app: RunningApp;

const definition = (nonce: string): string =>
  JSON.stringify({ image: stack.BASE_IMAGE_ANON, containerEnv: { NONCE: nonce } });
const imageName = (repo: PushedRepo): string => `it/prebuild/${repo.name}`;
const configuration = (
  repo: PushedRepo,
  extra: Partial<PrebuildConfiguration> = {},
): PrebuildConfiguration => ({
  repository: repo.url,
  branches: ['main', 'feature/*'],
  image: { registry: stack.REGISTRY_ANON, name: imageName(repo) },
  refreshOnBaseChange: true,
  ...extra,
});

test.before(async () => {
  for (const label of ['push', 'filters', 'supersede', 'failure', 'refused'])
    repos[label] = await pushedRepo(`pb-${label}`);
  const r = repos as Record<'push' | 'filters' | 'supersede' | 'failure' | 'refused', PushedRepo>;
  app = await startBuildApp({
    gitCredentials: [
      { host: '127.0.0.1', kind: 'https', username: stack.GIT_HTTPS_USER, token: stack.GIT_HTTPS_PASSWORD },
    ],
    prebuilds: {
      configurations: [
        configuration(r.push),
        configuration(r.filters, { paths: ['.devcontainer/**'] }),
        configuration(r.supersede),
        configuration(r.failure),
        configuration(r.refused),
      ],
      reconcileIntervalSeconds: 3600,
      refreshIntervalSeconds: 3600,
      hookSecrets: { github: secret, gitlab: gitlabToken },
    },
  });
  // The passes the instance makes when it takes the schedules read the repositories while they are
  // still empty: the tests push only after both, so that every build they see is their push's.
  const passesDone = (): boolean => {
    const lines = app.logText().split('\n');
    return ['reconcile', 'refresh'].every((pass) =>
      lines.some((line) => line.includes(`"pass":"${pass}"`) && line.includes('schedules: pass done')),
    );
  };
  await eventually(() => passesDone(), { timeout: 120_000, what: 'the first reconcile and refresh passes' });
});

test.after.always(async () => {
  await app?.close();
  for (const repo of Object.values(repos)) await repo.dispose();
});

async function builds(): Promise<BuildRecord[]> {
  const res = await fetch(`${app.url}/builds`);
  return ((await res.json()) as { builds: BuildRecord[] }).builds;
}

async function finished(id: unknown): Promise<BuildRecord> {
  return eventually(async () => (await builds()).find((b) => b.id === id && b.phase === 'finished'), {
    timeout: 600_000,
    interval: 500,
    what: `build ${String(id)} to finish`,
  });
}

async function deliveries(): Promise<Record<string, unknown>[]> {
  const res = await fetch(`${app.url}/hooks/deliveries`);
  return ((await res.json()) as { deliveries: Record<string, unknown>[] }).deliveries;
}

test('a push and its GitHub-signed webhook build with trigger push, and the branch tag moves', async (t) => {
  const repo = repos.push as PushedRepo;
  const commits = await repo.push('feature/X', { '.devcontainer/devcontainer.json': definition('push') });
  const answer = await githubHook(app.url, secret, githubPush(repo, 'feature/X', commits));
  t.is(answer.status, 202);
  t.regex(String(answer.body.reason), /^built bld-/);
  const listed = (await builds()).find((b) => b.id === answer.body.buildId);
  t.is(listed?.trigger, 'push');
  const record = await finished(answer.body.buildId);
  t.is(record.status, 'success');
  t.is(record.commit, commits.after);
  const name = imageName(repo);
  const built = await tagDigest(stack.REGISTRY_ANON, name, `sha-${commits.after.slice(0, 7)}`);
  t.truthy(built);
  await eventually(async () => (await tagDigest(stack.REGISTRY_ANON, name, 'feature-x')) === built, {
    timeout: 30_000,
    what: 'the branch tag feature-x',
  });
  const counted = await metricValue(app.url, 'service_prebuild_triggers_total', {
    trigger: 'push',
    decision: 'built',
  });
  t.true(counted >= 1);
});

test('a bad signature and a wrong GitLab token get 401 and no build', async (t) => {
  const repo = repos.refused as PushedRepo;
  const commits = await repo.push('main', { '.devcontainer/devcontainer.json': definition('refused') });
  const payload = githubPush(repo, 'main', commits);
  const bad = await sendHook(app.url, 'github', payload, {
    'x-github-event': 'push',
    'x-hub-signature-256': `sha256=${'0'.repeat(64)}`,
  });
  t.is(bad.status, 401);
  t.is(bad.body.error, 'bad or missing webhook signature');
  const unsigned = await sendHook(app.url, 'github', payload, { 'x-github-event': 'push' });
  t.is(unsigned.status, 401);
  const gitlab = await sendHook(
    app.url,
    'gitlab',
    {
      ref: 'refs/heads/main',
      before: commits.before,
      after: commits.after,
      project: { git_http_url: repo.url },
    },
    { 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': `${gitlabToken}x` },
  );
  t.is(gitlab.status, 401);
  const gitea = await sendHook(app.url, 'gitea', payload, { 'x-gitea-event': 'push' });
  t.is(gitea.status, 404, 'no Gitea secret configured');
  t.false((await builds()).some((b) => b.repository === repo.url));
  t.true((await deliveries()).filter((d) => d.reason === 'refused: bad signature').length >= 3);
  // Canary: neither secret anywhere a user or an operator looks.
  const seen = [
    app.logText(),
    await (await fetch(`${app.url}/config`)).text(),
    await (await fetch(`${app.url}/metrics`)).text(),
    await (await fetch(`${app.url}/hooks/deliveries`)).text(),
    await (await fetch(`${app.url}/builds`)).text(),
  ].join('\n');
  t.false(seen.includes(secret) || seen.includes(gitlabToken));
  const ping = await sendHook(
    app.url,
    'github',
    { zen: 'hi' },
    {
      'x-github-event': 'ping',
      'x-hub-signature-256': githubSignature(secret, { zen: 'hi' }),
    },
  );
  t.is(ping.status, 200);
});

test('a push outside paths, a deleted branch and an unconfigured branch build nothing, and say why', async (t) => {
  const repo = repos.filters as PushedRepo;
  const first = await repo.push('main', { '.devcontainer/devcontainer.json': definition('filters') });
  const built = await githubHook(app.url, secret, githubPush(repo, 'main', first));
  t.is(built.status, 202);
  const readme = await repo.push('main', { 'README.md': 'only the readme\n' });
  const outside = await githubHook(app.url, secret, githubPush(repo, 'main', readme));
  t.is(outside.status, 200);
  t.is(outside.body.decision, 'ignored');
  t.is(outside.body.reason, 'ignored: no change under paths');
  const other = await repo.push('other', { '.devcontainer/devcontainer.json': definition('other') });
  const unconfigured = await githubHook(app.url, secret, githubPush(repo, 'other', other));
  t.is(unconfigured.body.reason, 'ignored: branch not configured');
  const deleted = await githubHook(
    app.url,
    secret,
    githubPush(repo, 'main', { before: readme.after, after: ZERO }),
  );
  t.is(deleted.body.reason, 'ignored: branch deleted');
  const listed = await deliveries();
  t.true(listed.some((d) => d.commit === readme.after && d.reason === 'ignored: no change under paths'));
  t.true(listed.some((d) => d.branch === 'other' && d.reason === 'ignored: branch not configured'));
  const ours = (await builds()).filter((b) => b.repository === repo.url);
  t.deepEqual(
    ours.map((b) => b.id),
    [built.body.buildId],
  );
  await finished(built.body.buildId);
});

test('latest push wins: the first prebuild is cancelled, the second builds and moves the tag', async (t) => {
  const repo = repos.supersede as PushedRepo;
  const slow = await repo.push('main', {
    '.devcontainer/devcontainer.json': JSON.stringify({ build: { dockerfile: 'Dockerfile' } }),
    '.devcontainer/Dockerfile': SLOW_FIXTURE_DOCKERFILE(
      stack.BASE_IMAGE_ANON,
      randomBytes(6).toString('hex'),
    ),
  });
  const first = await githubHook(app.url, secret, githubPush(repo, 'main', slow));
  t.is(first.status, 202);
  const quick = await repo.push('main', {
    '.devcontainer/devcontainer.json': definition('supersede'),
    '.devcontainer/Dockerfile': null,
  });
  const second = await githubHook(app.url, secret, githubPush(repo, 'main', quick));
  t.is(second.status, 202);
  const cancelled = await finished(first.body.buildId);
  t.not(cancelled.status, 'success');
  const delivery = (await deliveries()).find((d) => d.id === first.body.id);
  t.is(delivery?.decision, 'superseded');
  t.is(delivery?.reason, `superseded by ${quick.after}`);
  const done = await finished(second.body.buildId);
  const ours = (await builds()).filter((b) => b.repository === repo.url);
  t.is(done.status, 'success', JSON.stringify(ours.map((b) => [b.id, b.trigger, b.status, b.error])));
  const name = imageName(repo);
  const built = await tagDigest(stack.REGISTRY_ANON, name, `sha-${quick.after.slice(0, 7)}`);
  await eventually(async () => (await tagDigest(stack.REGISTRY_ANON, name, 'main')) === built, {
    timeout: 30_000,
    what: 'the branch tag main on the second image',
  });
  t.pass();
});

test('a failing prebuild leaves the branch tag on the last good image', async (t) => {
  const repo = repos.failure as PushedRepo;
  const good = await repo.push('main', { '.devcontainer/devcontainer.json': definition('failure') });
  const first = await githubHook(app.url, secret, githubPush(repo, 'main', good));
  t.is((await finished(first.body.buildId)).status, 'success');
  const name = imageName(repo);
  const goodDigest = await tagDigest(stack.REGISTRY_ANON, name, `sha-${good.after.slice(0, 7)}`);
  await eventually(async () => (await tagDigest(stack.REGISTRY_ANON, name, 'main')) === goodDigest, {
    timeout: 30_000,
    what: 'the branch tag main on the good image',
  });
  const broken = await repo.push('main', {
    '.devcontainer/devcontainer.json': JSON.stringify({ build: { dockerfile: 'Dockerfile' } }),
    '.devcontainer/Dockerfile': `FROM ${stack.BASE_IMAGE_ANON}\nRUN exit 3\n`,
  });
  const second = await githubHook(app.url, secret, githubPush(repo, 'main', broken));
  t.is((await finished(second.body.buildId)).status, 'failure');
  t.is(await tagDigest(stack.REGISTRY_ANON, name, 'main'), goodDigest);
});
