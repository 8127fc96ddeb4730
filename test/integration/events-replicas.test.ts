/**
 * Events in Redis mode (docs/events.md): two real service processes share a Redis of the test's
 * own. The replica that records a build's events (and delivers its subscription) is killed while
 * the receiver is down; once the receiver is back the other replica delivers the event, signed,
 * with the same webhook-id, within the lease's takeover time. On a redis-server and on a
 * three-master Redis Cluster, with the same assertions.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REDIS_KINDS } from '../helpers/redis-kind.js';
import type { ReplicaRedis } from '../helpers/replica-redis.js';
import { ownReplicas } from '../helpers/replica-sets.js';
import { postJson, replicaEnv, startReplicas, type Replica } from '../helpers/replicas.js';
import { eventually } from '../helpers/eventually.js';
import { newSecret, startReceiver } from '../helpers/event-receiver.js';
import { httpsCreds, ownDockerfileRepo, stack, uniqueName } from '../helpers/build-support.js';
import { eventOwnerKey } from '../../src/redis/keys.js';

const secret = newSecret();
const dir = mkdtempSync(join(tmpdir(), 'ibs-events-replicas-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

interface Delivery {
  id: string;
  type: string;
  status: string;
  attempts: number;
  lastStatus?: number | string;
}

async function deliveries(replica: Replica): Promise<Delivery[]> {
  const res = await fetch(`${replica.url}/events/deliveries?subscription=deployer`);
  return ((await res.json()) as { deliveries: Delivery[] }).deliveries;
}

for (const kind of REDIS_KINDS) {
  test.serial(
    `${kind}: a replica killed while the receiver is down loses no event: the other one delivers it`,
    async (t) => {
      const receiver = await startReceiver([secret]);
      t.teardown(() => receiver.close());
      await receiver.down();
      const subscriptions = join(dir, `subscriptions-${kind}.yaml`);
      writeFileSync(
        subscriptions,
        JSON.stringify([{ name: 'deployer', url: receiver.url, secrets: [secret] }]),
      );
      const envOf = (redis: ReplicaRedis) =>
        replicaEnv(stack, redis, {
          EVENT_SUBSCRIPTIONS_CONFIG_PATH: subscriptions,
          EVENT_RETRY_SECONDS: Array.from({ length: 60 }, () => '2').join(','),
        });
      // A starts first and takes the subscription's lease: it records and delivers.
      const set = await ownReplicas(t, kind, ['A'], envOf);
      const [a] = set.replicas as [Replica];
      const client = (await set.redis.connection()).client;
      const owner = async () => (await client.get(eventOwnerKey('deployer'))) ?? '';
      await eventually(async () => (await owner()).includes(`-${a.service.child.pid}-`), {
        timeout: 30_000,
        what: 'replica A to deliver the subscription',
      });
      const [b] = await startReplicas(['B'], envOf(set.redis));
      if (b === undefined) throw new Error('no replica B');
      set.more.push(b);

      const repo = ownDockerfileRepo(
        `FROM ${stack.BASE_IMAGE_ANON}\nRUN echo ${randomBytes(8).toString('hex')}\n`,
      );
      t.teardown(repo.remove);
      const built = await postJson(a, '/build', {
        repository: repo.repository,
        gitCredentials: httpsCreds(),
        image: { registry: stack.REGISTRY_ANON, name: uniqueName('events-replicas') },
      });
      t.is(built.status, 200, JSON.stringify(built.body));
      // Recorded before the answer: B lists it at once, and A has been failing to reach the receiver.
      const listed = await deliveries(b);
      t.true(listed.length >= 2, JSON.stringify(listed));
      await eventually(async () => (await deliveries(b)).some((d) => d.lastStatus === 'unreachable'), {
        timeout: 30_000,
        what: 'an attempt of A on the receiver that is down',
      });

      await a.service.lose();
      await receiver.up();
      await eventually(() => receiver.received.length >= 2, {
        timeout: 120_000,
        interval: 200,
        what: 'both events at the receiver, from replica B',
      });
      t.true((await owner()).includes(`-${b.service.child.pid}-`), 'B took the subscription over');
      const ids = new Set(listed.map((d) => d.id));
      for (const r of receiver.received) {
        t.true(ids.has(r.webhookId), 'the webhook-id recorded by A');
        t.deepEqual(r.verified, [true]);
      }
      t.deepEqual(
        receiver.received.map((r) => r.event.type),
        ['dev.cdevents.build.finished.0.2.0', 'dev.cdevents.artifact.published.0.2.0'],
        'in the order recorded',
      );
      const final = await eventually(async () => {
        const now = await deliveries(b);
        return now.every((d) => d.status === 'delivered') && now;
      });
      // The head was tried by A while the receiver was down; the one behind it waited its turn.
      const attempts = (type: string) => final.find((d) => d.type === type)?.attempts ?? 0;
      t.true(attempts('dev.cdevents.build.finished.0.2.0') >= 2);
      t.is(attempts('dev.cdevents.artifact.published.0.2.0'), 1);
    },
  );
}
