/**
 * What a CI job sees of its real build (the stack: real git, the Dev Containers CLI, BuildKit, a
 * registry): its request id, GET /builds moving through the phases, the build log followed while
 * a RUN step sleeps, the streamed bytes equal to the stored log; and no credential in GET /builds.
 */
import { randomBytes } from 'node:crypto';
import test from 'ava';
import type { BuildRecord } from '../../src/builds/types.js';
import type { RunningApp } from '../helpers/app.js';
import { SLOW_STEP_SECONDS, SLOW_STEP_STARTED } from '../stack/fixtures.js';
import {
  httpsCreds,
  httpsRepo,
  sshRepo,
  stack,
  startBuildApp,
  startBuildAppFor,
  uniqueName,
} from '../helpers/build-support.js';
import { eventually } from '../helpers/eventually.js';

async function buildsOf(app: RunningApp, requestId: string): Promise<BuildRecord[]> {
  const res = await fetch(`${app.url}/builds?requestId=${requestId}`);
  return ((await res.json()) as { builds: BuildRecord[] }).builds;
}

interface Follower {
  text: () => string;
  /** When `needle` arrived (Date.now()). */
  arrival: (needle: string) => Promise<number>;
  ended: Promise<{ text: string; at: number }>;
  stop: () => void;
}

async function follow(app: RunningApp, id: string): Promise<Follower> {
  const abort = new AbortController();
  const res = await fetch(`${app.url}/logs/${id}?follow=true`, { signal: abort.signal });
  if (res.status !== 200 || res.body === null) throw new Error(`follow answered ${res.status}`);
  const chunks: Buffer[] = [];
  const text = (): string => Buffer.concat(chunks).toString('utf8');
  const waiters = new Set<() => void>();
  const body = res.body;
  const ended = (async () => {
    try {
      for await (const chunk of body) {
        chunks.push(Buffer.from(chunk));
        for (const wake of waiters) wake();
      }
    } catch (err) {
      if (!abort.signal.aborted) throw err;
    }
    return { text: text(), at: Date.now() };
  })();
  const arrival = (needle: string): Promise<number> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`never received ${needle}`)), 240_000);
      const check = (): void => {
        if (!text().includes(needle)) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve(Date.now());
      };
      waiters.add(check);
      check();
    });
  return { text, arrival, ended, stop: () => abort.abort() };
}

test('a slow real build: listed with its request id and phases, its log followed while it runs, then listed finished', async (t) => {
  const app = await startBuildAppFor(t);
  const requestId = `ci-pipeline-7:job.${randomBytes(3).toString('hex')}`;
  const name = uniqueName('visibility');

  let answeredAt: number | undefined;
  const answer = fetch(`${app.url}/build`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'X-Request-Id': requestId },
    body: JSON.stringify({
      repository: httpsRepo('slow'),
      gitCredentials: httpsCreds(),
      image: { registry: stack.REGISTRY_ANON, name },
      buildOptions: { noCache: true },
    }),
  }).then(async (res) => {
    answeredAt = Date.now();
    return {
      status: res.status,
      requestId: res.headers.get('x-request-id'),
      body: (await res.json()) as Record<string, string>,
    };
  });

  // Watch the build from outside, as a CI job would, until its build log exists.
  const phases: string[] = [];
  let gitLogWhileRunning: string | undefined;
  // Asked back to back (no pause): each phase the build passes through is seen.
  const { record: running, imgLog } = await eventually(
    async () => {
      if (answeredAt !== undefined) throw new Error('the build answered before its build log showed');
      const [record] = await buildsOf(app, requestId);
      if (record === undefined) return undefined;
      if (phases.at(-1) !== record.phase) phases.push(record.phase);
      gitLogWhileRunning ??= record.gitCloneLogId;
      const id = record.imageBuildLogId;
      return id !== undefined && { record, imgLog: id };
    },
    { timeout: 120_000, interval: 0, what: 'the build log in GET /builds' },
  );
  t.is(running.requestId, requestId);
  t.is(running.repository, httpsRepo('slow'));
  t.regex(gitLogWhileRunning ?? '', /^git-/);
  t.is(running.waiters, 1);

  const follower = await follow(app, imgLog);
  const leaving = await follow(app, imgLog);
  await leaving.arrival('$ devcontainer');
  leaving.stop();

  const stepStarted = await follower.arrival(SLOW_STEP_STARTED);
  t.is(answeredAt, undefined, 'the RUN line reached the follower while the build still ran');
  const during = await fetch(`${app.url}/logs/${imgLog}`);
  t.is(during.headers.get('x-log-complete'), 'false');
  t.true((await during.text()).includes(SLOW_STEP_STARTED));
  const [sleeping] = await buildsOf(app, requestId);
  t.is(sleeping?.phase, 'building');
  t.true((sleeping?.elapsedSeconds ?? 0) > 0);
  t.like(sleeping, { gitCloneLogId: gitLogWhileRunning, imageBuildLogId: imgLog });
  t.regex(sleeping?.commit ?? '', /^[0-9a-f]{40}$/);

  const streamed = await follower.ended;
  const result = await answer;
  t.is(result.status, 200, JSON.stringify(result.body));
  t.is(result.requestId, requestId);
  t.true(
    streamed.at - stepStarted >= (SLOW_STEP_SECONDS - 5) * 1000,
    'the stream stayed open while the step slept',
  );
  t.true(streamed.at <= (answeredAt ?? 0), 'the stream ended when the command ended, before the answer');
  const stored = await fetch(`${app.url}/logs/${imgLog}`);
  t.is(stored.headers.get('x-log-complete'), 'true');
  t.is(streamed.text, await stored.text(), 'streamed bytes equal the stored log');
  t.true(streamed.text.includes('slow step done'));

  // The phases seen, in order (cloning and resolving may pass between two looks, building may not).
  const order = ['cloning', 'resolving', 'building'];
  t.deepEqual(
    phases,
    [...phases].sort((a, b) => order.indexOf(a) - order.indexOf(b)),
  );
  t.true(phases.includes('building'));
  t.log(`phases seen: ${phases.join(' -> ')}`);

  const [finished] = await buildsOf(app, requestId);
  t.like(finished, {
    id: running.id,
    phase: 'finished',
    status: 'success',
    image: result.body.image,
    commit: result.body.commit,
    branch: result.body.branch,
    gitCloneLogId: result.body.gitCloneLogId,
    imageBuildLogId: result.body.imageBuildLogId,
  });
  t.true((finished?.durationSeconds ?? 0) >= SLOW_STEP_SECONDS);
  t.deepEqual(
    (await buildsOf(app, requestId)).map((b) => b.id),
    [running.id],
  );

  // The clone's log, long complete: followed, it comes whole and ends.
  const gitFollower = await follow(app, result.body.gitCloneLogId ?? '');
  const gitStored = await (await fetch(`${app.url}/logs/${result.body.gitCloneLogId}`)).text();
  t.is((await gitFollower.ended).text, gitStored);
});

test('GET /builds shows no credential: canaries in the request credentials and the server ssh key', async (t) => {
  const canaries = {
    gitUser: `canary-git-user-${randomBytes(4).toString('hex')}`,
    gitToken: `CANARY-GIT-TOKEN-${randomBytes(8).toString('hex')}`,
    registryUser: `canary-registry-user-${randomBytes(4).toString('hex')}`,
    registryPassword: `CANARY-REGISTRY-PASSWORD-${randomBytes(8).toString('hex')}`,
    sshKeyLine: `CANARYSSHKEYMATERIAL${randomBytes(16).toString('hex')}`,
  };
  const app = await startBuildApp({
    gitCredentials: [
      {
        host: stack.GIT_SSH_HOST,
        port: Number(stack.GIT_SSH_PORT),
        kind: 'ssh',
        privateKey: `-----BEGIN OPENSSH PRIVATE KEY-----\n${canaries.sshKeyLine}\n-----END OPENSSH PRIVATE KEY-----\n`,
      },
    ],
  });
  t.teardown(app.close);
  const post = (body: object) =>
    fetch(`${app.url}/build`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Request-Id': 'canary' },
      body: JSON.stringify({
        image: { registry: stack.REGISTRY_BASIC, name: uniqueName('canary') },
        ...body,
      }),
    });
  const https = await post({
    repository: httpsRepo('image'),
    gitCredentials: { username: canaries.gitUser, token: canaries.gitToken },
    registryCredentials: {
      registry: stack.REGISTRY_BASIC,
      username: canaries.registryUser,
      password: canaries.registryPassword,
    },
  });
  t.is(https.status, 500);
  const ssh = await post({ repository: sshRepo('image') });
  t.is(ssh.status, 500);

  const listing = await (await fetch(`${app.url}/builds?requestId=canary`)).text();
  const builds = (JSON.parse(listing) as { builds: BuildRecord[] }).builds;
  t.deepEqual(
    builds.map((b) => [b.status, b.phase]),
    [
      ['failure', 'finished'],
      ['failure', 'finished'],
    ],
  );
  t.true(builds.every((b) => typeof b.error === 'string' && b.gitCloneLogId !== undefined));
  for (const [field, canary] of Object.entries(canaries)) {
    t.false(listing.includes(canary), `${field} in GET /builds`);
    t.false(app.logText().includes(canary), `${field} in the service log`);
  }
});
