/**
 * The queue's order (docs/queue.md) as any store keeps it: classes first, tenants in turn, arrival
 * within a tenant; quotas of running builds; what a replica may not take; places. Registered
 * once per store (embedded mode's memory, Redis mode's scripts) so that both keep the same rules.
 */
import type { ExecutionContext } from 'ava';
import type { QueueClass, QueueEntry } from '../../src/queue/fair-order.js';
import { placeOf } from '../../src/queue/fair-order.js';
import type { QueueStore } from '../../src/queue/types.js';

let n = 0;
export const queueEntry = (
  tenant: string,
  cls: QueueClass = 'api',
  extra: Partial<QueueEntry> = {},
): QueueEntry => ({
  id: `bld-${tenant}-${cls}-${(n += 1)}`,
  class: cls,
  tenant,
  enqueuedAtMs: n,
  owner: 'a',
  request: { repository: `https://git.example/${tenant}/app.git` },
  requestId: `r${n}`,
  ...extra,
});

/** Every build `replica` takes, in order, until none is left it may take. */
export async function takeAll(store: QueueStore, replica = 'a'): Promise<QueueEntry[]> {
  const taken: QueueEntry[] = [];
  for (;;) {
    const { entry } = await store.take(replica, Date.now());
    if (entry === undefined) return taken;
    taken.push(entry);
  }
}

const tenants = (order: readonly QueueEntry[]): string =>
  order.map((e) => `${e.tenant}:${e.class}`).join(' ');
const queued = async (store: QueueStore, ...entries: QueueEntry[]): Promise<void> => {
  for (const entry of entries) await store.enqueue(entry);
};
async function placesOf(
  store: QueueStore,
  ids: readonly string[],
): Promise<[string, { position: number; ahead: number }][]> {
  const { builds, levels } = await store.places(ids);
  return builds.map((build) => [build.id, placeOf(levels, build)]);
}

/** `test` or `test.serial` of ava. */
type Register = (title: string, run: (t: ExecutionContext) => Promise<void>) => void;

export function orderCases(test: Register, title: string, newStore: () => Promise<QueueStore>): void {
  test(`${title}: a request goes before a push, a push before reconcile and refresh, whatever arrived first`, async (t) => {
    const store = await newStore();
    await queued(
      store,
      queueEntry('a', 'refresh'),
      queueEntry('b', 'reconcile'),
      queueEntry('c', 'push'),
      queueEntry('d', 'api'),
    );
    t.is(tenants(await takeAll(store)), 'd:api c:push a:refresh b:reconcile');
  });

  test(`${title}: tenants take turns within a class: a burst does not hold back a later tenant`, async (t) => {
    const store = await newStore();
    const burst = Array.from({ length: 5 }, () => queueEntry('mono', 'refresh'));
    await queued(store, ...burst, queueEntry('small', 'refresh'), queueEntry('small', 'refresh'));
    t.is(
      tenants(await takeAll(store)),
      'mono:refresh small:refresh mono:refresh small:refresh mono:refresh mono:refresh mono:refresh',
    );
  });

  test(`${title}: within a tenant, first come first served; taking moves the tenant behind the others`, async (t) => {
    const store = await newStore();
    const [a1, a2, b1] = [queueEntry('a'), queueEntry('a'), queueEntry('b')];
    await queued(store, a1, a2, b1);
    t.is((await store.take('a', 10)).entry?.id, a1.id);
    t.is((await store.take('a', 11)).entry?.id, b1.id);
    t.is((await store.take('a', 12)).entry?.id, a2.id);
  });

  test(`${title}: a tenant at its running quota waits while others start`, async (t) => {
    const store = await newStore();
    const [a1, a2, b1] = [
      queueEntry('a', 'api', { maxRunning: 1 }),
      queueEntry('a', 'api', { maxRunning: 1 }),
      queueEntry('b'),
    ];
    await queued(store, a1, a2, b1);
    t.is((await store.take('a', 1)).entry?.id, a1.id);
    t.is((await store.take('a', 2)).entry?.id, b1.id);
    t.is((await store.take('a', 3)).entry, undefined);
    t.is((await store.admission('a')).tenantRunning, 1);
    await store.ended(a1.id);
    t.is((await store.take('a', 4)).entry?.id, a2.id);
  });

  test(`${title}: a build started at once counts toward its tenant quota`, async (t) => {
    const store = await newStore();
    await queued(store, queueEntry('a', 'api', { maxRunning: 1 }));
    await store.started('bld-now', 'a', 1);
    t.is((await store.take('a', 2)).entry, undefined);
    await store.ended('bld-now');
    t.not((await store.take('a', 3)).entry, undefined);
  });

  test(`${title}: what a replica may not take is passed over, not blocking the rest`, async (t) => {
    const store = await newStore();
    const { request: _, ...held } = queueEntry('a', 'api', { owner: 'other' });
    const portable = queueEntry('b');
    await queued(store, held, portable);
    t.is((await store.take('me', 1)).entry?.id, portable.id);
    t.is((await store.take('me', 2)).entry, undefined);
    t.is((await store.take('other', 3)).entry?.id, held.id);
  });

  test(`${title}: places follow the take order; a removed build leaves no gap`, async (t) => {
    const store = await newStore();
    const [a1, a2, b1] = [queueEntry('a'), queueEntry('a'), queueEntry('b')];
    await queued(store, a1, a2, b1);
    t.deepEqual(await placesOf(store, [a1.id, b1.id, a2.id]), [
      [a1.id, { position: 1, ahead: 0 }],
      [b1.id, { position: 2, ahead: 1 }],
      [a2.id, { position: 3, ahead: 2 }],
    ]);
    t.not(await store.remove(b1.id), undefined);
    t.is(await store.remove(b1.id), undefined, 'removed once');
    t.deepEqual(await placesOf(store, [a2.id, b1.id]), [[a2.id, { position: 2, ahead: 1 }]]);
  });

  test(`${title}: places match the order the builds are taken in, over classes and tenants`, async (t) => {
    const store = await newStore();
    const entries = ['x', 'y', 'x', 'z', 'x', 'y'].flatMap((tenant, i) => [
      queueEntry(tenant, i % 2 === 0 ? 'refresh' : 'push'),
      queueEntry(tenant, 'api'),
    ]);
    await queued(store, ...entries);
    const places = new Map(
      await placesOf(
        store,
        entries.map((e) => e.id),
      ),
    );
    const order = await takeAll(store);
    t.deepEqual(
      order.map((e) => places.get(e.id)?.position),
      order.map((_, i) => i + 1),
    );
  });

  test(`${title}: the counters a build's admission reads follow enqueue, take and removal`, async (t) => {
    const store = await newStore();
    const [a1, a2] = [queueEntry('a', 'push'), queueEntry('a', 'api')];
    await queued(store, a1, a2);
    t.like(await store.admission('a'), {
      depths: { api: 1, push: 1, reconcile: 0, refresh: 0 },
      tenantWaiting: 2,
    });
    await store.take('a', 1);
    await store.remove(a1.id);
    t.like(await store.admission('a'), { depths: { api: 0, push: 0 }, tenantWaiting: 0, tenantRunning: 1 });
  });

  test(`${title}: the builds only a stopped replica could run are dropped, the others stay`, async (t) => {
    const store = await newStore();
    const { request: _, ...held } = queueEntry('a', 'api', { owner: 'gone' });
    const portable = queueEntry('a', 'api', { owner: 'gone' });
    await queued(store, held, portable);
    const dropped = await store.dropHeld('gone');
    t.true(dropped.some((e) => e.id === held.id));
    t.is((await store.take('me', 1)).entry?.id, dropped.length === 1 ? portable.id : undefined);
  });
}
