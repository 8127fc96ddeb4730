/**
 * What every build registry promises of its pages (embedded and Redis mode alike): the order, the
 * cursor's stability while builds finish, the last page without `next`, each filter, the history's
 * bound and its days. Each test file registers the suite with its own way to make a registry.
 */
import test from 'ava';
import { eventually } from './eventually.js';
import type { BuildFilter, BuildRecord, BuildRegistry, NewBuild } from '../../src/builds/types.js';

interface SuiteRegistry {
  readonly registry: BuildRegistry;
  /** Moves the registry's clock on. */
  readonly advance: (ms: number) => void;
}

export type MakeRegistry = (
  t: { teardown: (fn: () => Promise<void> | void) => void },
  options: { history: number; historyDays?: number },
) => Promise<SuiteRegistry>;

const DAY_MS = 24 * 3600 * 1000;

const newBuild = (n: number, extra: Partial<NewBuild> = {}): NewBuild => ({
  requestId: `req-${n}`,
  repository: `https://git.example/team-${n % 3}/app.git`,
  image: 'registry.example/app',
  ...extra,
});

/** Every page of `filter`, `limit` at a time; the ids of each page. */
async function allPages(registry: BuildRegistry, filter: BuildFilter, limit: number): Promise<string[][]> {
  const pages: string[][] = [];
  let after: string | undefined;
  for (;;) {
    const page = await registry.list(filter, { limit, ...(after === undefined ? {} : { after }) });
    pages.push(page.builds.map((b) => b.requestId));
    if (page.next === undefined) return pages;
    after = page.next;
  }
}

/** Starts `count` builds 1 s apart (the newest last). */
async function started(
  suite: SuiteRegistry,
  count: number,
  extra: (n: number) => Partial<NewBuild> = () => ({}),
) {
  const ids: string[] = [];
  for (let n = 0; n < count; n++) {
    ids.push(await suite.registry.start(newBuild(n, extra(n))));
    suite.advance(1000);
  }
  return ids;
}

export function buildPagesSuite(name: string, make: MakeRegistry): void {
  test(`${name}: pages walk every build newest first; the last page has no next`, async (t) => {
    const suite = await make(t, { history: 100 });
    await started(suite, 7);
    const pages = await allPages(suite.registry, {}, 3);
    t.deepEqual(pages, [['req-6', 'req-5', 'req-4'], ['req-3', 'req-2', 'req-1'], ['req-0']]);
    const whole = await suite.registry.list({}, { limit: 7 });
    t.is(whole.builds.length, 7);
    t.is(whole.next, undefined, 'exactly one page: no next');
  });

  test(`${name}: a cursor holds while builds finish and start: nothing repeats, nothing is skipped`, async (t) => {
    const suite = await make(t, { history: 100 });
    const ids = await started(suite, 6);
    const first = await suite.registry.list({}, { limit: 2 });
    t.deepEqual(
      first.builds.map((b) => b.requestId),
      ['req-5', 'req-4'],
    );
    // Meanwhile: every build finishes, and a new one starts (newer than the cursor).
    for (const id of ids) await suite.registry.finish(id, { status: 'success', durationSeconds: 1 });
    await suite.registry.start(newBuild(99));
    const rest = await allPages(suite.registry, {}, 2);
    t.deepEqual(rest[0], ['req-99', 'req-5'], 'the first page again starts with the newest');
    const second = await suite.registry.list({}, { limit: 10, after: first.next as string });
    t.deepEqual(
      second.builds.map((b) => b.requestId),
      ['req-3', 'req-2', 'req-1', 'req-0'],
    );
    t.true(second.builds.every((b: BuildRecord) => b.status === 'success'));
    t.is(second.next, undefined);
  });

  test(`${name}: each filter selects in the index, and pages of a filter hold only its builds`, async (t) => {
    const suite = await make(t, { history: 100 });
    const ids = await started(suite, 9, (n) => ({
      branch: n % 2 === 0 ? 'main' : 'dev',
      ...(n >= 6 ? { trigger: 'push' as const } : {}),
      ...(n === 4 ? { requestedBy: { kind: 'token' as const, subject: 'ci-bot' } } : {}),
      // The queue named another tenant (an access rule's `tenant`, docs/queue.md).
      ...(n === 5 ? { tenant: 'platform' } : {}),
    }));
    await suite.registry.finish(ids[0] as string, { status: 'failure', durationSeconds: 1 });
    await suite.registry.finish(ids[1] as string, { status: 'success', durationSeconds: 1 });
    await suite.registry.update(ids[2] as string, { branch: 'main', phase: 'building' });
    const of = async (filter: BuildFilter, limit = 2) =>
      (await allPages(suite.registry, filter, limit)).flat();
    t.deepEqual(await of({ status: 'failure' }), ['req-0']);
    t.deepEqual(await of({ status: 'success' }), ['req-1']);
    t.deepEqual(await of({ status: 'running' }), [
      'req-8',
      'req-7',
      'req-6',
      'req-5',
      'req-4',
      'req-3',
      'req-2',
    ]);
    t.deepEqual(await of({ repository: 'https://git.example/team-1/app.git' }), ['req-7', 'req-4', 'req-1']);
    t.deepEqual(await of({ branch: 'dev' }), ['req-7', 'req-5', 'req-3', 'req-1']);
    t.deepEqual(await of({ trigger: 'push' }), ['req-8', 'req-7', 'req-6']);
    t.deepEqual(await of({ trigger: 'api' }, 3), ['req-5', 'req-4', 'req-3', 'req-2', 'req-1', 'req-0']);
    t.deepEqual(await of({ caller: 'ci-bot' }), ['req-4']);
    t.deepEqual(await of({ requestId: 'req-3' }), ['req-3']);
    // A tenant: the one the queue named, else the repository's owner.
    t.deepEqual(await of({ tenant: 'team-2' }), ['req-8', 'req-2']);
    t.deepEqual(await of({ tenant: 'platform' }), ['req-5']);
    t.deepEqual(await of({ tenant: 'team-1', status: 'running' }), ['req-7', 'req-4']);
    t.deepEqual(await of({ tenant: 'team' }), []);
    const listed = await suite.registry.list({ requestId: 'req-5' }, { limit: 1 });
    t.is(listed.builds[0]?.tenant, 'platform');
    t.is((await suite.registry.get(ids[7] as string))?.tenant, 'team-1');
    t.deepEqual(await of({ branch: 'main', trigger: 'push', status: 'running' }), ['req-8', 'req-6']);
    t.deepEqual(await of({ branch: 'nowhere' }), []);
  });

  test(`${name}: the caller's visibility fills the page instead of shrinking it`, async (t) => {
    const suite = await make(t, { history: 100 });
    await started(suite, 12);
    const visible = (record: BuildRecord): boolean => !record.repository.includes('team-0');
    const page = await suite.registry.list({}, { limit: 4, visible });
    t.deepEqual(
      page.builds.map((b) => b.requestId),
      ['req-11', 'req-10', 'req-8', 'req-7'],
    );
    const next = await suite.registry.list({}, { limit: 4, visible, after: page.next as string });
    t.deepEqual(
      next.builds.map((b) => b.requestId),
      ['req-5', 'req-4', 'req-2', 'req-1'],
    );
    t.is(next.next, undefined, 'the builds after it are all hidden: the last page');
  });

  test(`${name}: the history keeps the newest finished builds, each for historyDays`, async (t) => {
    const suite = await make(t, { history: 3, historyDays: 2 });
    const ids = await started(suite, 5);
    for (const id of ids.slice(0, 4)) {
      await suite.registry.finish(id, { status: 'success', durationSeconds: 1 });
      suite.advance(1000);
    }
    t.deepEqual((await allPages(suite.registry, {}, 10)).flat(), ['req-4', 'req-3', 'req-2', 'req-1']);
    t.deepEqual((await allPages(suite.registry, { status: 'success' }, 10)).flat(), [
      'req-3',
      'req-2',
      'req-1',
    ]);
    t.is(await suite.registry.get(ids[0] as string), undefined, 'beyond the bound: gone');
    suite.advance(DAY_MS);
    await suite.registry.finish(ids[4] as string, { status: 'failure', durationSeconds: 1 });
    suite.advance(DAY_MS + 1000);
    t.deepEqual(
      (await allPages(suite.registry, {}, 10)).flat(),
      ['req-4'],
      'two days on: only the last finished',
    );
    t.is(await suite.registry.get(ids[3] as string), undefined);
    t.deepEqual((await allPages(suite.registry, { repository: newBuild(2).repository }, 10)).flat(), []);
    suite.advance(DAY_MS);
    t.deepEqual((await allPages(suite.registry, {}, 10)).flat(), []);
    t.is(await suite.registry.get(ids[4] as string), undefined);
  });

  test(`${name}: every change is told with the build's id and repository, nothing else`, async (t) => {
    const suite = await make(t, { history: 10 });
    const heard: string[] = [];
    const stop = await suite.registry.watchChanges((change) => {
      t.deepEqual(Object.keys(change).sort(), ['id', 'repository']);
      heard.push(change.id);
    });
    t.teardown(stop);
    const id = await suite.registry.start(newBuild(1));
    await suite.registry.update(id, { phase: 'building', imageBuildLogId: 'img-1' });
    await suite.registry.finish(id, { status: 'success', durationSeconds: 1 });
    await eventually(() => heard.length >= 3, { what: 'three changes told' });
    t.deepEqual(heard, [id, id, id]);
    t.is((await suite.registry.ownerOfLog('img-1'))?.id, id);
    t.is(await suite.registry.ownerOfLog('img-2'), undefined);
  });
}
