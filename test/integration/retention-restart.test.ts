/**
 * Retention in embedded mode remembers its repositories across a restart (docs/retention.md): a
 * real service process builds into two repositories of this test's own, plans, is killed, and a
 * new process on the same scratch space plans the same images without any build in between.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postJson, replicaEnv, startReplicas, stopReplicas, type Replica } from '../helpers/replicas.js';
import { eventually } from '../helpers/eventually.js';
import { httpsCreds, ownDockerfileRepo, stack, uniqueName } from '../helpers/build-support.js';
import type { RetentionAnswer } from '../../src/retention/answer.js';

const dir = mkdtempSync(join(tmpdir(), 'ibs-retention-restart-'));
const running: Replica[] = [];
test.after.always(async () => {
  await stopReplicas(running);
  rmSync(dir, { recursive: true, force: true });
});

/** Each repository's images as `repository tag digest action`, sorted (what a plan names). */
async function plannedImages(replica: Replica): Promise<string[]> {
  const res = await fetch(`${replica.url}/retention/plan`);
  if (res.status !== 200) throw new Error(`GET /retention/plan: ${String(res.status)}`);
  const plan = (await res.json()) as RetentionAnswer;
  return plan.repositories
    .flatMap((repo) => {
      if (repo.error !== undefined) throw new Error(`${repo.repository}: ${repo.error}`);
      return repo.images.map((image) => `${repo.repository} ${image.tag} ${image.digest} ${image.action}`);
    })
    .sort();
}

test('a restarted embedded instance plans the same images as before the restart', async (t) => {
  const { REDIS_URL: _redis, ...embedded } = replicaEnv(stack, '', {
    RETENTION_MODE: 'dry-run',
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
  const names = [uniqueName('retention-restart-a'), uniqueName('retention-restart-b')];
  const builds = [
    { name: names[0], tag: 'one' },
    { name: names[0], tag: 'two' },
    { name: names[1], tag: 'one' },
  ];
  for (const { name, tag } of builds) {
    const built = await postJson(first, '/build', {
      repository: repo.repository,
      gitCredentials: httpsCreds(),
      image: { registry: stack.REGISTRY_ANON, name, tag },
    });
    t.is(built.status, 200, `${JSON.stringify(built.body)}\n${first.service.stdout().slice(-4000)}`);
  }
  // A build's repository is recorded as its answer is given: planned once both are there.
  const before = await eventually(
    async () => {
      const images = await plannedImages(first);
      return images.length === builds.length ? images : undefined;
    },
    { timeout: 30_000, interval: 200, what: 'the plan to name the three images' },
  );
  for (const name of names)
    t.true(
      before.some((line) => line.startsWith(`${stack.REGISTRY_ANON}/${name} `)),
      name,
    );
  t.is(before.length, 3, before.join('\n'));

  await first.service.lose();
  const [second] = await startReplicas(['second'], env);
  if (second === undefined) throw new Error('no service');
  running.push(second);
  t.deepEqual(await plannedImages(second), before);
});
