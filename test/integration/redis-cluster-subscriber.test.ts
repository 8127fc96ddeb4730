// A subscriber connection of the service to a real three-master Redis Cluster of the test's own
// (Debian's redis-server), through a whole-Cluster outage: while every node is down it tries the
// nodes in turn with the reconnect backoff (a few attempts a second, not thousands), and once the
// Cluster is back a message published on it reaches the channel subscribed before the outage.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import test from 'ava';
import { Cluster } from 'ioredis';
import { readyConnection } from '../helpers/redis-test-server.js';
import { startRedisCluster } from '../helpers/redis-cluster-process.js';
import { eventually } from '../helpers/eventually.js';

/** How long the whole Cluster stays down: the scenario itself, not a wait for something. */
const OUTAGE_MS = 10_000;
/** More attempts than this per node and second is a reconnection with no pause. */
const MAX_ATTEMPTS_PER_NODE_AND_SECOND = 2;
const CHANNEL = 'ibs-test:subscriber';

test('a Cluster subscriber backs off while every node is down and hears the Cluster once back', async (t) => {
  const cluster = await startRedisCluster();
  t.teardown(() => cluster.dispose());
  const connection = await readyConnection(cluster);
  t.teardown(() => connection.close());
  const sub = connection.subscriber('subscriptions');
  const messages: string[] = [];
  sub.on('message', (_channel: string, message: string) => messages.push(message));
  await sub.subscribe(CHANNEL);

  // Every TCP connection this process opens (the connection's command client's too: no other).
  let attempts = 0;
  const counted = (): void => {
    attempts += 1;
  };
  subscribe('net.client.socket', counted);
  t.teardown(() => unsubscribe('net.client.socket', counted));
  const refused = new Set<number>();
  sub.on('error', (err: { port?: unknown }) => {
    if (typeof err.port === 'number') refused.add(err.port);
  });
  await cluster.stop();
  const stoppedAt = Date.now();
  attempts = 0;
  await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
  const seconds = (Date.now() - stoppedAt) / 1000;
  const tried = attempts;
  t.log(`${tried} connection attempts in ${seconds.toFixed(1)} s`);
  const nodes = cluster.target.kind === 'cluster' ? cluster.target.nodes : [];
  t.true(tried <= MAX_ATTEMPTS_PER_NODE_AND_SECOND * nodes.length * seconds, `${tried} attempts`);
  // It kept trying, every node in turn.
  const byPort = (a: number, b: number): number => a - b;
  t.deepEqual([...refused].sort(byPort), nodes.map((node) => node.port).sort(byPort));

  await cluster.start();
  const publisher = new Cluster([...nodes], { redisOptions: { password: cluster.password } });
  t.teardown(() => publisher.disconnect());
  // Published until heard: the subscriber reconnects within its backoff (at most 1 s) after start().
  await eventually(
    async () => {
      await publisher.publish(CHANNEL, 'back').catch(() => 0);
      return messages.includes('back');
    },
    { interval: 200, what: 'a message published once the Cluster is back' },
  );
});
