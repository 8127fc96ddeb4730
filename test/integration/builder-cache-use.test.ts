/**
 * Each builder's cache use, as BuildKit reports it through the service's buildx: once a build has
 * set the stack's builder up, the worker's builder states carry its totals (read in the
 * background, never while readiness answers), and readiness keeps every field it had.
 */
import test from 'ava';
import { execa } from 'execa';
import {
  httpsCreds,
  httpsRepo,
  postBuild,
  stack,
  startBuildAppFor,
  uniqueName,
} from '../helpers/build-support.js';
import { eventually } from '../helpers/eventually.js';

test('the builder states carry the cache use buildx du reports; readiness is unchanged', async (t) => {
  const app = await startBuildAppFor(t, { build: { reuse: false } });
  const builders = () => app.ctx.buildWorker.builders?.() ?? [];
  t.is(
    (builders()[0] as { cache?: unknown } | undefined)?.cache,
    undefined,
    'no reading before buildx knows it',
  );
  const res = await postBuild(app, {
    repository: httpsRepo('image'),
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name: uniqueName('cache-use') },
  });
  t.is(res.status, 200, JSON.stringify(res.body));
  let cache: { totalBytes: number; reclaimableBytes: number; readAt: string } | undefined;
  await eventually(
    () => {
      cache = (builders()[0] as { cache?: typeof cache } | undefined)?.cache;
      return cache !== undefined;
    },
    { timeout: 30_000, interval: 200, what: 'a cache use reading' },
  );
  t.true((cache?.totalBytes ?? 0) > 0);
  t.true((cache?.reclaimableBytes ?? -1) >= 0);
  t.true(Date.now() - Date.parse(cache?.readAt ?? '') < 60_000);
  // The same builder read by hand with the service's buildx configuration.
  const name = app.ctx.config.builderName;
  const byHand = await execa('docker', ['buildx', 'du', '--builder', name], {
    env: { DOCKER_CONFIG: app.ctx.config.dockerConfigDir },
  });
  t.regex(byHand.stdout, /Total:/);

  const ready = await fetch(`${app.url}/health/ready`);
  t.is(ready.status, 200);
  const body = (await ready.json()) as { status: string; builders: Array<Record<string, unknown>> };
  t.is(body.status, 'ready');
  t.like(body.builders[0], { builder: stack.STACK_BUILDER_ENDPOINT, state: 'up' });
});
