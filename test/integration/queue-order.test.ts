/**
 * The shared build queue in embedded mode, with real builds (docs/queue.md): one slot held by a
 * build whose step waits, the queue fills behind it, and the order in which the queued builds run
 * once the slot frees is what a user can observe: by class, round-robin across tenants, under
 * per-tenant quotas; a full queue answers 429 and a cancelled queued build never runs. The queued
 * builds are cheap (reuse answers identical inputs), so the ordering, not the building, costs.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import type { BuildRecord } from '../../src/builds/types.js';
import type { RunningApp } from '../helpers/app.js';
import {
  httpsCreds,
  ownDockerfileRepo,
  stack,
  startBuildAppFor,
  uniqueName,
} from '../helpers/build-support.js';
import { eventually } from '../helpers/eventually.js';
import { listBuilds, postAsyncAnswer } from '../helpers/replicas.js';
import { SLOW_FIXTURE_DOCKERFILE } from '../stack/fixtures.js';
import { planBuild } from '../../workers/plan/plan.js';
import type { BuildWorker } from '../../workers/build-worker.js';
import { tenantOf } from '../../src/rules/tenants.js';
import type { BuildTrigger } from '../../src/builds/types.js';

type Teardown = { teardown: (fn: () => void | Promise<void>) => void };

/** A served repository of its own (its own tenant) whose build is cheap, or whose step waits. */
function repoOf(t: Teardown, kind: 'cheap' | 'slow'): { repository: string; tenant: string } {
  const nonce = randomBytes(8).toString('hex');
  const dockerfile =
    kind === 'slow'
      ? SLOW_FIXTURE_DOCKERFILE(stack.BASE_IMAGE_ANON, nonce, 600)
      : `FROM ${stack.BASE_IMAGE_ANON}\nENV IBS_QUEUE_NONCE=${nonce}\n`;
  const repo = ownDockerfileRepo(dockerfile);
  t.teardown(repo.remove);
  const tenant = new URL(repo.repository).pathname.split('/')[1]?.replace(/\.git$/, '') ?? '';
  return { repository: repo.repository, tenant };
}

const requestOf = (repository: string, image: string) => ({
  repository,
  gitCredentials: httpsCreds(),
  image: { registry: stack.REGISTRY_ANON, name: image },
});

const postAsync = (app: RunningApp, body: unknown) =>
  postAsyncAnswer<BuildRecord & Record<string, unknown>>(app, body);

/** A prebuild's build, started as the prebuilds start theirs (workers/prebuild-builds.ts). */
async function prebuild(
  app: RunningApp,
  request: ReturnType<typeof requestOf>,
  trigger: BuildTrigger,
): Promise<BuildRecord> {
  const plan = planBuild(request, app.ctx.config);
  const requestId = `prebuild-${randomUUID()}`;
  return app.ctx.buildWorker.start(plan, { requestId, logger: app.ctx.logger.child({ requestId }), trigger });
}

/** The ids of finished builds, in the order they ended. */
function endOrder(app: RunningApp): BuildRecord[] {
  const ended: BuildRecord[] = [];
  // The app's own worker (its context narrows it to what the routes use).
  (app.ctx.buildWorker as BuildWorker).onBuildEnded(async (record) => void ended.push(record));
  return ended;
}

/** Holds the app's one slot with a build whose step waits; DELETE frees it. */
async function holdSlot(t: ExecutionContext, app: RunningApp) {
  const slow = repoOf(t, 'slow');
  const held = await postAsync(app, requestOf(slow.repository, uniqueName('queue-hold')));
  t.is(held.status, 202);
  t.not(held.body.phase, 'queued', 'the holding build takes the free slot');
  return {
    id: held.body.id,
    release: async () => {
      const res = await fetch(`${app.url}/builds/${held.body.id}`, { method: 'DELETE' });
      t.is(res.status, 202, 'the holding build is cancelled');
    },
  };
}

/** Builds `request` once, so that later identical requests are answered by reuse. */
async function warm(t: ExecutionContext, app: RunningApp, request: unknown) {
  const res = await fetch(`${app.url}/build`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(request),
  });
  t.is(res.status, 200, await res.clone().text());
  await res.arrayBuffer();
}

const finished = (ended: readonly BuildRecord[], ids: readonly string[]) => () =>
  ids.every((id) => ended.some((r) => r.id === id));

test('a refresh storm of one tenant is queued; a CI build of another starts next, a push before the rest', async (t) => {
  const app = await startBuildAppFor(t, { build: { maxConcurrent: 1, reuse: true } });
  const storm = repoOf(t, 'cheap');
  const ci = repoOf(t, 'cheap');
  const push = repoOf(t, 'cheap');
  const stormRequest = requestOf(storm.repository, uniqueName('queue-storm'));
  await warm(t, app, stormRequest);
  const ended = endOrder(app);
  const slot = await holdSlot(t, app);

  const refreshes = await Promise.all(
    Array.from({ length: 30 }, () => prebuild(app, stormRequest, 'refresh')),
  );
  t.true(
    refreshes.every((r) => r.phase === 'queued'),
    'every refresh is queued, none refused',
  );
  const ciBuild = await postAsync(app, requestOf(ci.repository, uniqueName('queue-ci')));
  t.is(ciBuild.status, 202);
  t.is(ciBuild.body.phase, 'queued');
  t.deepEqual(ciBuild.body.queue, { position: 1, ahead: 0 }, 'the CI build goes first');
  const pushBuild = await prebuild(app, requestOf(push.repository, uniqueName('queue-push')), 'push');
  t.is(pushBuild.phase, 'queued');
  t.deepEqual(pushBuild.queue, { position: 2, ahead: 1 }, 'the push goes before the refreshes');
  t.is((await listBuilds(app, 'status=queued')).length, 32);

  await slot.release();
  const ids = [ciBuild.body.id, pushBuild.id, ...refreshes.map((r) => r.id)];
  await eventually(async () => finished(ended, ids)(), {
    timeout: 300_000,
    interval: 200,
    what: 'every queued build to end',
  });
  const order = ended.filter((r) => ids.includes(r.id)).map((r) => r.id);
  t.is(order[0], ciBuild.body.id, 'the CI build took the first free slot');
  t.is(order[1], pushBuild.id, 'the push before the remaining refreshes');
  t.true(ended.filter((r) => ids.includes(r.id)).every((r) => r.status === 'success'));
  t.is(ended.filter((r) => r.id === slot.id).length, 1);
});

test('two tenants, one with 20 queued and one with 2: the second one starts within two slot turns', async (t) => {
  const app = await startBuildAppFor(t, { build: { maxConcurrent: 1, reuse: true } });
  const big = repoOf(t, 'cheap');
  const small = repoOf(t, 'cheap');
  const bigRequest = requestOf(big.repository, uniqueName('queue-big'));
  const smallRequest = requestOf(small.repository, uniqueName('queue-small'));
  await warm(t, app, bigRequest);
  await warm(t, app, smallRequest);
  const ended = endOrder(app);
  const slot = await holdSlot(t, app);

  const bigIds: string[] = [];
  for (let i = 0; i < 20; i += 1) {
    const res = await postAsync(app, bigRequest);
    t.is(res.status, 202);
    bigIds.push(res.body.id);
  }
  const smallIds: string[] = [];
  for (let i = 0; i < 2; i += 1) {
    const res = await postAsync(app, smallRequest);
    t.is(res.status, 202);
    smallIds.push(res.body.id);
  }
  const queued = await listBuilds(app, 'status=queued');
  const positions = smallIds.map((id) => queued.find((r) => r.id === id)?.queue?.position);
  t.deepEqual(positions, [2, 4], 'the small tenant is served every other turn');

  await slot.release();
  const ids = [...bigIds, ...smallIds];
  await eventually(async () => finished(ended, ids)(), {
    timeout: 300_000,
    interval: 200,
    what: 'every queued build to end',
  });
  const order = ended.filter((r) => ids.includes(r.id)).map((r) => r.id);
  t.true(
    order.indexOf(smallIds[0] ?? '') < 2,
    `the first within two turns (${String(order.indexOf(smallIds[0] ?? ''))})`,
  );
  t.true(order.indexOf(smallIds[1] ?? '') < 4, `the second within two turns of the first`);
});

test('maxRunning 1 for a tenant: never two of its builds at once, other tenants unaffected', async (t) => {
  const limited = repoOf(t, 'cheap');
  const app = await startBuildAppFor(t, {
    build: { maxConcurrent: 3, reuse: false, quotas: [{ tenant: limited.tenant, maxRunning: 1 }] },
  });
  const other = repoOf(t, 'cheap');
  const limitedIds: string[] = [];
  const otherIds: string[] = [];
  for (let i = 0; i < 3; i += 1) {
    const res = await postAsync(app, requestOf(limited.repository, uniqueName('queue-limited')));
    t.is(res.status, 202);
    limitedIds.push(res.body.id);
  }
  for (let i = 0; i < 2; i += 1) {
    const res = await postAsync(app, requestOf(other.repository, uniqueName('queue-other')));
    t.is(res.status, 202);
    otherIds.push(res.body.id);
  }
  let mostLimited = 0;
  let otherBesideLimited = 0;
  await eventually(
    async () => {
      const all = await listBuilds(app, '');
      const running = all.filter((r) => r.phase !== 'queued' && r.phase !== 'finished');
      const limitedNow = running.filter((r) => limitedIds.includes(r.id)).length;
      mostLimited = Math.max(mostLimited, limitedNow);
      if (limitedNow > 0) otherBesideLimited += running.filter((r) => otherIds.includes(r.id)).length;
      return [...limitedIds, ...otherIds].every((id) => all.find((r) => r.id === id)?.phase === 'finished');
    },
    { timeout: 300_000, interval: 50, what: 'every build to end' },
  );
  t.is(mostLimited, 1, 'never two builds of the limited tenant at once');
  t.true(otherBesideLimited > 0, 'the other tenant ran beside it');
  const records = await listBuilds(app, '');
  t.true([...limitedIds, ...otherIds].every((id) => records.find((r) => r.id === id)?.status === 'success'));
});

test('a full queue answers 429 with Retry-After; a queued build cancelled with DELETE never runs', async (t) => {
  const app = await startBuildAppFor(t, { build: { maxConcurrent: 1, maxQueued: 2, reuse: true } });
  const cheap = repoOf(t, 'cheap');
  const request = requestOf(cheap.repository, uniqueName('queue-full'));
  const ended = endOrder(app);
  const slot = await holdSlot(t, app);
  const first = await postAsync(app, request);
  const second = await postAsync(app, request);
  t.deepEqual([first.status, second.status], [202, 202]);
  const refused = await postAsync(app, request);
  t.is(refused.status, 429);
  t.deepEqual(refused.body, { error: '2 builds already wait for a slot, the maximum; retry later' });
  t.regex(refused.headers.get('retry-after') ?? '', /^[1-9]\d*$/);

  const cancelled = await fetch(`${app.url}/builds/${second.body.id}`, { method: 'DELETE' });
  t.is(cancelled.status, 202);
  await slot.release();
  await eventually(async () => finished(ended, [first.body.id, second.body.id])(), {
    timeout: 300_000,
    interval: 200,
    what: 'both queued builds to end',
  });
  const gone = (await (await fetch(`${app.url}/builds/${second.body.id}`)).json()) as BuildRecord;
  t.is(gone.status, 'failure');
  t.regex(gone.error ?? '', /^the build was cancelled by DELETE/);
  t.is(gone.gitCloneLogId, undefined, 'it never cloned');
  t.is(((await (await fetch(`${app.url}/builds/${first.body.id}`)).json()) as BuildRecord).status, 'success');
  t.is(tenantOf(planBuild(request, app.ctx.config)), cheap.tenant);
});
