/**
 * Events in embedded mode survive a restart (docs/events.md): a build's events are recorded in the
 * scratch space while the receiver is down; the process is killed, started again on the same
 * scratch space, and delivers them once the receiver is back, signed, with the same webhook-ids.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postJson, replicaEnv, startReplicas, stopReplicas, type Replica } from '../helpers/replicas.js';
import { eventually } from '../helpers/eventually.js';
import { newSecret, startReceiver } from '../helpers/event-receiver.js';
import { httpsCreds, ownDockerfileRepo, stack, uniqueName } from '../helpers/build-support.js';

const dir = mkdtempSync(join(tmpdir(), 'ibs-events-restart-'));
const running: Replica[] = [];
test.after.always(async () => {
  await stopReplicas(running);
  rmSync(dir, { recursive: true, force: true });
});

test('events recorded while the receiver is down are delivered after a restart', async (t) => {
  const secret = newSecret();
  const receiver = await startReceiver([secret]);
  t.teardown(() => receiver.close());
  await receiver.down();
  const subscriptions = join(dir, 'subscriptions.json');
  writeFileSync(subscriptions, JSON.stringify([{ name: 'deployer', url: receiver.url, secrets: [secret] }]));
  const { REDIS_URL: _redis, ...embedded } = replicaEnv(stack, '', {
    EVENT_SUBSCRIPTIONS_CONFIG_PATH: subscriptions,
    EVENT_RETRY_SECONDS: Array.from({ length: 60 }, () => '2').join(','),
  });
  // The same scratch space for both processes (TMPDIR/image-build-service).
  const env = { ...embedded, TMPDIR: join(dir, 'tmp') };
  const [first] = await startReplicas(['first'], env);
  if (first === undefined) throw new Error('no service');
  running.push(first);
  const repo = ownDockerfileRepo(
    `FROM ${stack.BASE_IMAGE_ANON}\nRUN echo ${randomBytes(8).toString('hex')}\n`,
  );
  t.teardown(repo.remove);
  const built = await postJson(first, '/build', {
    repository: repo.repository,
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name: uniqueName('events-restart') },
  });
  t.is(built.status, 200, JSON.stringify(built.body));
  const res = await fetch(`${first.url}/events/deliveries?status=pending`);
  const recorded = ((await res.json()) as { deliveries: { id: string }[] }).deliveries.map((d) => d.id);
  t.is(recorded.length, 2);
  await first.service.lose();

  const [second] = await startReplicas(['second'], env);
  if (second === undefined) throw new Error('no service');
  running.push(second);
  await receiver.up();
  await eventually(() => receiver.received.length >= 2, {
    timeout: 60_000,
    interval: 100,
    what: 'the events recorded before the restart',
  });
  t.deepEqual(receiver.received.map((r) => r.webhookId).sort(), [...recorded].sort());
  for (const r of receiver.received) t.deepEqual(r.verified, [true]);
});
