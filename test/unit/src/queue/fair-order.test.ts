// The queue's order (docs/queue.md) over its pure state: classes first, tenants in turn, arrival
// within a tenant; quotas of running builds; positions; the drain estimate of a full queue's 429.
import test from 'ava';
import {
  drainSeconds,
  EMPTY_QUEUE,
  pickNext,
  positions,
  takeOrder,
  withEntry,
  withoutWaiting,
  withRunning,
  withTaken,
  type QueueClass,
  type QueueEntry,
  type QueueState,
} from '../../../../src/queue/fair-order.js';

let n = 0;
const entry = (tenant: string, cls: QueueClass = 'api', extra: Partial<QueueEntry> = {}): QueueEntry => ({
  id: `bld-${tenant}-${cls}-${(n += 1)}`,
  class: cls,
  tenant,
  enqueuedAtMs: n,
  owner: 'a',
  request: { repository: `https://git.example/${tenant}/app.git` },
  requestId: `r${n}`,
  ...extra,
});
const queued = (...entries: QueueEntry[]): QueueState => entries.reduce(withEntry, EMPTY_QUEUE);
const tenants = (order: QueueEntry[]): string => order.map((e) => `${e.tenant}:${e.class}`).join(' ');

test('a request goes before a push, a push before reconcile and refresh, whatever arrived first', (t) => {
  const state = queued(entry('a', 'refresh'), entry('b', 'reconcile'), entry('c', 'push'), entry('d', 'api'));
  t.is(tenants(takeOrder(state)), 'd:api c:push a:refresh b:reconcile');
});

test('tenants take turns within a class: a burst does not hold back a later tenant', (t) => {
  const burst = Array.from({ length: 5 }, () => entry('mono', 'refresh'));
  const state = queued(...burst, entry('small', 'refresh'), entry('small', 'refresh'));
  t.is(
    tenants(takeOrder(state)),
    'mono:refresh small:refresh mono:refresh small:refresh mono:refresh mono:refresh mono:refresh',
  );
});

test('within a tenant, first come first served; taking moves the tenant behind the others', (t) => {
  const [a1, a2, b1] = [entry('a'), entry('a'), entry('b')];
  let state = queued(a1, a2, b1);
  const first = pickNext(state, () => true);
  t.is(first?.id, a1.id);
  state = withTaken(state, a1, 10);
  t.is(pickNext(state, () => true)?.id, b1.id);
  t.deepEqual(
    state.running.map((r) => r.id),
    [a1.id],
  );
});

test('a tenant at its running quota waits while others start', (t) => {
  const [a1, a2, b1] = [
    entry('a', 'api', { maxRunning: 1 }),
    entry('a', 'api', { maxRunning: 1 }),
    entry('b'),
  ];
  let state = queued(a1, a2, b1);
  state = withTaken(state, pickNext(state, () => true) ?? a1, 1);
  t.is(pickNext(state, () => true)?.id, b1.id);
  state = withTaken(state, b1, 2);
  t.is(
    pickNext(state, () => true),
    undefined,
  );
  state = { ...state, running: state.running.filter((r) => r.id !== a1.id) };
  t.is(pickNext(state, () => true)?.id, a2.id);
});

test('a build started at once counts toward its tenant quota', (t) => {
  const waiting = entry('a', 'api', { maxRunning: 1 });
  const state = withRunning(queued(waiting), { id: 'bld-now', tenant: 'a' });
  t.is(
    pickNext(state, () => true),
    undefined,
  );
});

test('what a replica may not take is passed over, not blocking the rest', (t) => {
  const held = entry('a', 'api', { owner: 'other' });
  delete (held as { request?: unknown }).request;
  const portable = entry('b');
  const state = queued(held, portable);
  const mine = (e: QueueEntry): boolean => e.request !== undefined || e.owner === 'me';
  t.is(pickNext(state, mine)?.id, portable.id);
});

test('positions follow the take order; a removed build leaves no gap', (t) => {
  const [a1, a2, b1] = [entry('a'), entry('a'), entry('b')];
  const state = queued(a1, a2, b1);
  t.deepEqual(
    [...positions(state).entries()],
    [
      [a1.id, { position: 1, ahead: 0 }],
      [b1.id, { position: 2, ahead: 1 }],
      [a2.id, { position: 3, ahead: 2 }],
    ],
  );
  t.deepEqual(positions(withoutWaiting(state, b1.id)).get(a2.id), { position: 2, ahead: 1 });
});

test('a full queue waits as long as the measured drain rate says, a default without data', (t) => {
  t.is(drainSeconds(EMPTY_QUEUE, 10, 60), 60);
  const drained = { ...EMPTY_QUEUE, takes: [0, 1000, 2000, 3000, 4000] };
  t.is(drainSeconds(drained, 10, 60), 10);
  t.is(drainSeconds(drained, 100_000, 60), 3600);
});
