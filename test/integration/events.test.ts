/**
 * Events on the real stack (docs/events.md), embedded mode: a successful and a failed build deliver
 * signed CloudEvents to receivers that verify them with the `standardwebhooks` package (both secrets
 * of a rotation) and parse them with the `cloudevents` SDK; a receiver answering 500 twice gets the
 * third attempt with the same webhook-id; one answering 410 is disabled; filters hold; no payload
 * holds the registry password, the git password or the build secret.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningApp } from '../helpers/app.js';
import {
  httpsCreds,
  ownDockerfileRepo,
  postBuild,
  stack,
  startBuildApp,
  uniqueName,
  type BuildResponse,
} from '../helpers/build-support.js';
import { eventually } from '../helpers/eventually.js';
import { newSecret, startReceiver, type EventReceiver } from '../helpers/event-receiver.js';
import { metricValue } from '../helpers/metrics.js';
import { SECRETS_FIXTURE_DOCKERFILE } from '../stack/fixtures.js';
import type { EventSubscription } from '../../src/config/types.js';

const FINISHED = 'dev.cdevents.build.finished.0.2.0';
const PUBLISHED = 'dev.cdevents.artifact.published.0.2.0';
const canary = `CANARY-${randomBytes(12).toString('hex')}`;
const [oldSecret, newerSecret, flakySecret, goneSecret, otherSecret] = [1, 2, 3, 4, 5].map(() => newSecret());

interface World {
  app: RunningApp;
  receivers: Record<'all' | 'flaky' | 'gone' | 'elsewhere' | 'failures', EventReceiver>;
  success: BuildResponse;
  failure: BuildResponse;
  scratchDir: string;
  cleanup: (() => void)[];
}

async function startWorld(): Promise<World> {
  const receivers = {
    // Rotation: signed with both the old and the new secret.
    all: await startReceiver([oldSecret ?? '', newerSecret ?? '']),
    flaky: await startReceiver([flakySecret ?? ''], (_id, attempt) => ({ status: attempt <= 2 ? 500 : 200 })),
    gone: await startReceiver([goneSecret ?? ''], () => ({ status: 410 })),
    elsewhere: await startReceiver([otherSecret ?? '']),
    failures: await startReceiver([otherSecret ?? '']),
  };
  const subscriptions: EventSubscription[] = [
    { name: 'all', url: receivers.all.url, secrets: [oldSecret ?? '', newerSecret ?? ''] },
    {
      name: 'flaky',
      url: receivers.flaky.url,
      secrets: [flakySecret ?? ''],
      types: ['dev.cdevents.build.finished'],
    },
    { name: 'gone', url: receivers.gone.url, secrets: [goneSecret ?? ''] },
    {
      name: 'elsewhere',
      url: receivers.elsewhere.url,
      secrets: [otherSecret ?? ''],
      repositories: [{ host: 'git.elsewhere.example' }],
    },
    { name: 'failures', url: receivers.failures.url, secrets: [otherSecret ?? ''], statuses: ['failure'] },
  ];
  const scratchDir = await mkdtemp(join(tmpdir(), 'ibs-events-'));
  const app = await startBuildApp({ scratchDir, events: { subscriptions, retrySeconds: [1, 1, 1, 1, 1] } });
  const nonce = randomBytes(8).toString('hex');
  const good = ownDockerfileRepo(SECRETS_FIXTURE_DOCKERFILE(stack.BASE_IMAGE_ANON, nonce));
  const bad = ownDockerfileRepo(
    [`FROM ${stack.BASE_IMAGE_ANON}`, `RUN echo ${nonce} && exit 1`, ''].join('\n'),
  );
  const success = await postBuild(app, {
    repository: good.repository,
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_BASIC, name: uniqueName('events-ok') },
    registryCredentials: {
      registry: stack.REGISTRY_BASIC,
      username: stack.REGISTRY_BASIC_USER,
      password: stack.REGISTRY_BASIC_PASSWORD,
    },
    buildSecrets: { npmrc: `//npm.example.com/:_authToken=${canary}\n` },
  });
  const failure = await postBuild(app, {
    repository: bad.repository,
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name: uniqueName('events-fail') },
    buildSecrets: { npmrc: canary },
  });
  return { app, receivers, success, failure, scratchDir, cleanup: [good.remove, bad.remove] };
}

const world = startWorld();

test.after.always(async () => {
  const w = await world;
  await w.app.close();
  for (const receiver of Object.values(w.receivers)) await receiver.close();
  for (const remove of w.cleanup) remove();
  await rm(w.scratchDir, { recursive: true, force: true });
});

const ofType = (receiver: EventReceiver, type: string) =>
  receiver.received.filter((r) => r.event.type === type);
const customData = (data: unknown): Record<string, unknown> =>
  ((data as Record<string, unknown>).customData ?? {}) as Record<string, unknown>;

test('a successful and a failed build deliver signed, parsable events naming image, digest, commit and log', async (t) => {
  const { success, failure, receivers } = await world;
  t.is(success.status, 200, JSON.stringify(success.body));
  t.true(failure.status >= 400, JSON.stringify(failure.body));
  const all = receivers.all;
  await eventually(() => all.received.length >= 3, { timeout: 60_000, what: 'three events at the receiver' });
  for (const r of all.received) {
    t.deepEqual(r.verified, [true, true], 'both secrets of the rotation verify');
    t.is(r.event.specversion, '1.0');
    t.is(r.webhookId, r.event.id);
    t.regex(String(r.headers['content-type']), /^application\/cloudevents\+json/);
  }
  const finished = ofType(all, FINISHED).map((r) => customData(r.event.data));
  const ok = finished.find((d) => d.outcome === 'success');
  const failed = finished.find((d) => d.outcome === 'failure');
  t.like(ok, {
    image: success.body.image,
    digest: success.body.digest,
    commit: success.body.commit,
    imageBuildLogId: success.body.imageBuildLogId,
  });
  t.truthy(failed?.imageBuildLogId);
  t.is(failed?.imageBuildLogId, failure.body.logId);
  const [published] = ofType(all, PUBLISHED);
  t.is(published?.event.subject, String(success.body.image));
  const subject = (published?.event.data as { subject: { id: string } }).subject;
  const name = String(success.body.name);
  t.is(
    subject.id,
    `pkg:oci/${name.split('/').at(-1)}@${encodeURIComponent(String(success.body.digest))}` +
      `?repository_url=${stack.REGISTRY_BASIC}/${name}&tag=${String(success.body.tag)}`,
  );
});

test('the registry password, the git password and the build secret are in no payload', async (t) => {
  const { receivers } = await world;
  await eventually(() => receivers.all.received.length >= 3, { timeout: 60_000, what: 'the events' });
  const payloads = Object.values(receivers).flatMap((r) =>
    r.received.map((e) => e.raw + JSON.stringify(e.headers)),
  );
  t.true(payloads.length >= 3);
  for (const secret of [canary, stack.REGISTRY_BASIC_PASSWORD, stack.GIT_HTTPS_PASSWORD])
    t.false(
      payloads.some((p) => p.includes(secret)),
      'a secret in a payload',
    );
});

test('a receiver answering 500 twice gets the third attempt, with the same webhook-id', async (t) => {
  const { app, receivers } = await world;
  const flaky = receivers.flaky;
  await eventually(() => flaky.received.length >= 2, { timeout: 90_000, what: 'both build.finished events' });
  for (const r of flaky.received) {
    t.is(flaky.attemptsOf(r.webhookId), 3);
    // Signed afresh: each attempt a second or more after the one before.
    t.is(new Set(flaky.timestampsOf(r.webhookId)).size, 3);
    t.true(r.verified[0]);
  }
  const res = await fetch(`${app.url}/events/deliveries?subscription=flaky&status=delivered`);
  const { deliveries } = (await res.json()) as { deliveries: { attempts: number; lastStatus: number }[] };
  t.is(deliveries.length, 2);
  for (const d of deliveries) t.like(d, { attempts: 3, lastStatus: 200 });
  t.true(
    (await metricValue(app.url, 'service_event_deliveries_total', {
      subscription: 'flaky',
      result: 'retried',
    })) >= 4,
  );
  await eventually(
    async () =>
      (await metricValue(app.url, 'service_event_deliveries_pending', { subscription: 'flaky' })) === 0,
    { timeout: 30_000, what: 'nothing pending for flaky' },
  );
});

test('a receiver answering 410 disables its subscription', async (t) => {
  const { app, receivers } = await world;
  const res = await eventually(
    async () => {
      const answer = await fetch(`${app.url}/events/deliveries?subscription=gone&status=disabled`);
      const body = (await answer.json()) as { deliveries: { lastStatus: number }[] };
      return body.deliveries.length > 0 && body.deliveries;
    },
    { timeout: 60_000, what: 'a disabled delivery' },
  );
  t.is(res[0]?.lastStatus, 410);
  t.is(
    await metricValue(app.url, 'service_event_deliveries_total', {
      subscription: 'gone',
      result: 'disabled',
    }),
    1,
  );
  t.true(app.logLines().some((l) => l.msg === 'event subscription disabled: its receiver answered 410 Gone'));
  // Every later event stays recorded and unsent: one request only reached the receiver.
  await eventually(() => receivers.all.received.length >= 3, {
    timeout: 60_000,
    what: 'the other deliveries',
  });
  const listed = (await (await fetch(`${app.url}/events/deliveries?subscription=gone`)).json()) as {
    deliveries: { id: string }[];
  };
  const ids = listed.deliveries.map((d) => d.id);
  t.is(ids.length, 3);
  t.is(
    ids.reduce((sum, id) => sum + receivers.gone.attemptsOf(id), 0),
    1,
  );
});

test('a subscription scoped to another repository receives nothing; one on failure only failures', async (t) => {
  const { app, receivers } = await world;
  await eventually(() => receivers.failures.received.length >= 1 && receivers.all.received.length >= 3, {
    timeout: 60_000,
    what: 'the failure event',
  });
  t.is(receivers.failures.received.length, 1);
  t.is(receivers.failures.received[0]?.event.type, FINISHED);
  t.is(customData(receivers.failures.received[0]?.event.data).outcome, 'failure');
  t.is(receivers.elsewhere.received.length, 0);
  const res = await fetch(`${app.url}/events/deliveries?subscription=elsewhere`);
  t.deepEqual(await res.json(), { deliveries: [] });
});

test('GET /events/deliveries refuses an unknown subscription or state', async (t) => {
  const { app } = await world;
  for (const query of ['subscription=nope', 'status=lost', 'other=1']) {
    const res = await fetch(`${app.url}/events/deliveries?${query}`);
    t.is(res.status, 400, query);
    t.regex(
      ((await res.json()) as { error: string }).error,
      /^invalid filters for GET \/events\/deliveries: /,
    );
  }
});

test('/config shows each subscription by URL host and types, never a secret', async (t) => {
  const { app, receivers } = await world;
  const text = await (await fetch(`${app.url}/config`)).text();
  const view = JSON.parse(text) as { eventSubscriptions: unknown[] };
  t.deepEqual(view.eventSubscriptions[1], {
    name: 'flaky',
    host: new URL(receivers.flaky.url).host,
    types: ['dev.cdevents.build.finished'],
  });
  for (const secret of [oldSecret, newerSecret, flakySecret, goneSecret, otherSecret])
    t.false(text.includes(secret ?? ''));
});
