import test from 'ava';
import { createMemoryBuildRegistry } from '../../../../src/builds/memory-registry.js';
import type { BuildFilter, BuildRegistry, NewBuild } from '../../../../src/builds/types.js';

/** Every build a registry lists (one page of the largest size). */
const listed = async (registry: Pick<BuildRegistry, 'list'>, filter: BuildFilter = {}) =>
  (await registry.list(filter, { limit: 500 })).builds;

const build = (n: number, repository = 'https://git.example/org/app.git'): NewBuild => ({
  requestId: `req-${n}`,
  repository,
  image: `registry.example/app`,
});

function clock(start = Date.parse('2026-01-01T00:00:00Z')) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

test('a build is listed from its start, learns as it goes, and is listed finished with its outcome', async (t) => {
  const time = clock();
  const registry = createMemoryBuildRegistry({ history: 5, now: time.now });
  const id = await registry.start({ ...build(1), branch: 'main' });
  t.regex(id, /^bld-[0-9a-f-]{36}$/);
  time.advance(1500);
  t.deepEqual(await listed(registry), [
    {
      id,
      requestId: 'req-1',
      repository: 'https://git.example/org/app.git',
      tenant: 'org',
      branch: 'main',
      image: 'registry.example/app',
      phase: 'cloning',
      startedAt: '2026-01-01T00:00:00.000Z',
      elapsedSeconds: 1.5,
      waiters: 1,
    },
  ]);
  await registry.update(id, { gitCloneLogId: 'git-1' });
  await registry.update(id, {
    commit: 'c0ffee',
    image: 'registry.example/app:sha-c0ffee0',
    phase: 'building',
  });
  await registry.update(id, { imageBuildLogId: 'img-1' });
  await registry.addWaiters(id, 2);
  time.advance(500);
  const [running] = await listed(registry);
  t.like(running, {
    phase: 'building',
    commit: 'c0ffee',
    image: 'registry.example/app:sha-c0ffee0',
    gitCloneLogId: 'git-1',
    imageBuildLogId: 'img-1',
    waiters: 3,
    elapsedSeconds: 2,
  });
  t.is(running?.status, undefined);

  await registry.finish(id, {
    status: 'failure',
    durationSeconds: 2.25,
    error: 'git clone exited with code 128',
  });
  time.advance(60_000);
  const [finished] = await listed(registry);
  t.like(finished, {
    phase: 'finished',
    status: 'failure',
    durationSeconds: 2.25,
    elapsedSeconds: 2.25,
    error: 'git clone exited with code 128',
  });
  // A finished build changes no more.
  await registry.update(id, { phase: 'building' });
  t.is((await listed(registry))[0]?.phase, 'finished');
});

test('newest first; only the newest N finished builds are kept, running ones always', async (t) => {
  const time = clock();
  const registry = createMemoryBuildRegistry({ history: 2, now: time.now });
  const ids: string[] = [];
  for (let n = 0; n < 5; n++) {
    ids.push(await registry.start(build(n)));
    time.advance(1000);
  }
  for (const id of ids.slice(0, 4)) await registry.finish(id, { status: 'success', durationSeconds: 1 });
  const kept = await listed(registry);
  t.deepEqual(
    kept.map((b) => b.requestId),
    ['req-4', 'req-3', 'req-2'],
  );
  t.deepEqual(
    kept.map((b) => b.phase),
    ['cloning', 'finished', 'finished'],
  );
});

test('filters: request id, repository, running or a metric status; every given field must match', async (t) => {
  const registry = createMemoryBuildRegistry({ history: 10 });
  const a = await registry.start(build(1, 'repo-a'));
  const b = await registry.start(build(2, 'repo-b'));
  await registry.start(build(3, 'repo-a'));
  await registry.finish(a, { status: 'success', durationSeconds: 3, image: 'r/a:sha-1' });
  await registry.finish(b, { status: 'invalid_request', durationSeconds: 1, error: 'no definition' });
  const ids = async (filter: Parameters<typeof registry.list>[0]) =>
    (await listed(registry, filter)).map((x) => x.requestId).sort();
  t.deepEqual(await ids({}), ['req-1', 'req-2', 'req-3']);
  t.deepEqual(await ids({ requestId: 'req-2' }), ['req-2']);
  t.deepEqual(await ids({ repository: 'repo-a' }), ['req-1', 'req-3']);
  t.deepEqual(await ids({ status: 'running' }), ['req-3']);
  t.deepEqual(await ids({ status: 'success' }), ['req-1']);
  t.deepEqual(await ids({ status: 'invalid_request' }), ['req-2']);
  t.deepEqual(await ids({ status: 'busy' }), []);
  t.deepEqual(await ids({ repository: 'repo-a', status: 'running' }), ['req-3']);
  t.deepEqual(await ids({ repository: 'repo-b', requestId: 'req-1' }), []);
  t.is((await listed(registry, { requestId: 'req-1' }))[0]?.image, 'r/a:sha-1');
});
