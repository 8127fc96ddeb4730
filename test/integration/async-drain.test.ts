/**
 * The drain on SIGTERM waits for async builds as for requests: a real service process stops
 * listening at once, yet runs its async build (which has no request in flight) to its end, then
 * exits 0 with the build succeeded.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { httpsCreds, ownDockerfileRepo, stack, uniqueName } from '../helpers/build-support.js';
import { eventually } from '../helpers/eventually.js';
import { replicaEnv } from '../helpers/replicas.js';
import { spawnService } from '../helpers/service-process.js';
import { SLOW_FIXTURE_DOCKERFILE, SLOW_STEP_STARTED } from '../stack/fixtures.js';

test('SIGTERM with an async build running: no new connections, the build runs to its end, then exit 0', async (t) => {
  const repo = ownDockerfileRepo(
    SLOW_FIXTURE_DOCKERFILE(stack.BASE_IMAGE_ANON, randomBytes(8).toString('hex')),
  );
  t.teardown(repo.remove);
  const { REDIS_URL: _embedded, ...env } = replicaEnv(stack, '');
  const service = spawnService(['--port', '0'], env);
  t.teardown(() => service.lose());
  const { port } = await service.waitForLog('listening');
  const url = `http://127.0.0.1:${String(port)}`;
  const accepted = await fetch(`${url}/build`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', Prefer: 'respond-async' },
    body: JSON.stringify({
      repository: repo.repository,
      gitCredentials: httpsCreds(),
      image: { registry: stack.REGISTRY_ANON, name: uniqueName('drain') },
    }),
  });
  t.is(accepted.status, 202);
  const { id } = (await accepted.json()) as { id: string };
  await eventually(
    async () => {
      const record = (await (await fetch(`${url}/builds/${id}`)).json()) as { imageBuildLogId?: string };
      if (record.imageBuildLogId === undefined) return false;
      return (await (await fetch(`${url}/logs/${record.imageBuildLogId}`)).text()).includes(
        SLOW_STEP_STARTED,
      );
    },
    { timeout: 180_000, interval: 250, what: 'the silent step to start' },
  );
  service.child.kill('SIGTERM');
  await service.waitForLog('shutting down: not accepting connections, letting in-flight requests finish');
  await eventually(async () => (await fetch(`${url}/health/live`).catch(() => undefined)) === undefined, {
    what: 'the listener to close',
  });
  t.is(service.child.exitCode, null, 'still running while its async build runs');
  t.is(await service.exited, 0);
  t.truthy(service.lines().find((l) => l.msg === 'build succeeded'));
});
