// The delivery loops over the file journal of a temp dir: events go out in order per subscription,
// a receiver that never answers holds up no other subscription, and a journal reopened (a restart)
// still holds what was not delivered. The attempts are small fakes; the journal is real files.
import test from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { EventService } from '../../../../src/events/events.js';
import { FileJournal } from '../../../../src/events/file-journal.js';
import type { AttemptAnswer } from '../../../../src/events/outcome.js';
import type { CloudEvent } from '../../../../src/events/types.js';
import type { EventSubscription } from '../../../../src/config/types.js';
import { EventMetrics } from '../../../../src/observability/event-metrics.js';
import { eventually } from '../../../helpers/eventually.js';
import { silentLogger } from '../../../helpers/silent-logger.js';

const TIMING = { idlePollMs: 50, ownerPollMs: 50, maxWaitMs: 50 };
const sub = (name: string): EventSubscription => ({
  name,
  url: `http://127.0.0.1:9/${name}`,
  secrets: [`whsec_${Buffer.alloc(32, 1).toString('base64')}`],
});

async function service(
  dir: string,
  attempt: (s: EventSubscription, e: CloudEvent) => Promise<AttemptAnswer>,
  retrySeconds: readonly number[] = [0, 0],
): Promise<EventService> {
  const subscriptions = [sub('slow'), sub('fast')];
  const journal = await FileJournal.open(
    dir,
    subscriptions.map((s) => s.name),
  );
  return new EventService({
    config: { observability: { serviceName: 'test' }, events: { subscriptions, retrySeconds } },
    journal,
    metrics: new EventMetrics(new Registry()),
    logger: silentLogger(),
    timing: TIMING,
    attempt,
  }).start();
}

const deleted = (n: number) => ({ registry: 'r', name: `img${n}`, digest: `sha256:${n}`, reason: 'test' });

test('in order per subscription; a receiver that hangs holds up no other', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ibs-loop-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const fast: string[] = [];
  let release: (() => void) | undefined;
  const hanging = new Promise<void>((resolve) => (release = resolve));
  const events = await service(dir, async (s, e) => {
    if (s.name === 'slow') await hanging;
    else fast.push(String((e.data.customData as { name: string }).name));
    return { kind: 'status', status: 200 };
  });
  for (let n = 0; n < 20; n++) await events.emitImageDeleted(deleted(n));
  await eventually(() => fast.length === 20, { timeout: 10_000, what: 'the fast subscription' });
  t.deepEqual(
    fast,
    Array.from({ length: 20 }, (_, n) => `img${n}`),
  );
  t.is((await events.deliveries({ subscription: 'slow', status: 'pending' })).length, 20);
  release?.();
  await eventually(
    async () => (await events.deliveries({ subscription: 'slow', status: 'delivered' })).length === 20,
    {
      timeout: 10_000,
    },
  );
  await events.close();
});

test('what was not delivered survives a reopened journal, with its attempts', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ibs-loop-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const down = await service(dir, () => Promise.resolve({ kind: 'unreachable' }), [1]);
  await down.emitImageDeleted(deleted(1));
  await eventually(async () => (await down.deliveries({ subscription: 'fast' }))[0]?.attempts === 1);
  await down.close();
  const seen: string[] = [];
  const up = await service(dir, (s, e) => {
    seen.push(`${s.name} ${e.id}`);
    return Promise.resolve({ kind: 'status', status: 200 });
  });
  await eventually(async () => (await up.deliveries({ status: 'delivered' })).length === 2, {
    timeout: 10_000,
  });
  const [delivery] = await up.deliveries({ subscription: 'fast' });
  t.like(delivery, { attempts: 2, lastStatus: 200, status: 'delivered' });
  t.is(seen.length, 2);
  await up.close();
});
