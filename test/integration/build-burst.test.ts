/**
 * A real burst: with maxConcurrent 2, five simultaneous builds give exactly two builds and
 * three 429s; the slots are free again afterwards.
 */
import test from 'ava';
import {
  httpsCreds,
  httpsRepo,
  postBuild,
  stack,
  startBuildApp,
  uniqueName,
} from '../helpers/build-support.js';
import { sampleValue, scrapeMetrics } from '../helpers/metrics.js';

test('maxConcurrent 2 under a burst of 5: two build, three get 429, then slots are free again', async (t) => {
  const app = await startBuildApp({ build: { maxConcurrent: 2 } });
  t.teardown(() => app.close());
  const request = () => ({
    repository: httpsRepo('feature'),
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name: uniqueName('burst') },
  });

  const responses = await Promise.all(Array.from({ length: 5 }, () => postBuild(app, request())));
  const ok = responses.filter((r) => r.status === 200);
  const busy = responses.filter((r) => r.status === 429);
  t.is(ok.length, 2, JSON.stringify(responses.map((r) => [r.status, r.body])));
  t.is(busy.length, 3);
  for (const r of busy) {
    t.deepEqual(r.body, { error: 'already running 2 builds, the maximum; retry later' });
    // No build has finished on this instance yet: the estimate's default.
    t.is(r.headers.get('retry-after'), '30');
  }

  const again = await Promise.all([postBuild(app, request()), postBuild(app, request())]);
  t.deepEqual(
    again.map((r) => r.status),
    [200, 200],
  );

  const metrics = await scrapeMetrics(app.url);
  t.is(sampleValue(metrics, 'service_builds_total', { status: 'busy' }), 3);
  t.is(sampleValue(metrics, 'service_builds_total', { status: 'success' }), 4);
});
