// An Idempotency-Key held by a request whose build could not be recorded (the store failing over),
// or whose reservation landed with its answer lost, is freed once the store answers again, so the
// caller's retry starts the build at once; a late release never frees the key a later request holds.
import test from 'ava';
import { createMemoryBuildRegistry } from '../../../../src/builds/memory-registry.js';
import type { BuildRegistry } from '../../../../src/builds/types.js';
import { Metrics } from '../../../../src/observability/metrics.js';
import { IdempotentRequests } from '../../../../workers/flow/idempotency.js';
import { eventually } from '../../../helpers/eventually.js';
import { silentLogger } from '../../../helpers/silent-logger.js';

/** The memory registry, its releases failing (the store away) until `back()`. */
function storeAway(): { builds: BuildRegistry; back: () => void; tries: () => number } {
  const builds = createMemoryBuildRegistry({ history: 10 });
  let away = true;
  let tries = 0;
  const releaseKey = builds.releaseKey.bind(builds);
  builds.releaseKey = async (key, token) => {
    tries += 1;
    if (away) throw new Error('the store is away');
    return releaseKey(key, token);
  };
  return { builds, back: () => (away = false), tries: () => tries };
}

const request = { key: 'ci-run-42', digest: 'sha256:body' };
const requests = (builds: BuildRegistry) => new IdempotentRequests(builds, new Metrics(), silentLogger());

test('a held key is freed once the store answers again; the retry then holds it', async (t) => {
  const { builds, back, tries } = storeAway();
  const keys = requests(builds);
  const first = await keys.attach(request);
  if (!('held' in first)) return t.fail('the first request holds the key');
  keys.releaseSoon(first.held);
  await eventually(() => tries() >= 2, { timeout: 10_000, interval: 50, what: 'a second try' });
  t.deepEqual(await builds.reserveKey(request.key, request.digest, 'other'), {
    kind: 'taken',
    sameBody: true,
  });
  back();
  const retry = await keys.attach(request);
  t.true('held' in retry, 'the retry holds the key once the release landed');
});

test('a reservation that landed with its answer lost is freed once the store answers', async (t) => {
  const { builds, back } = storeAway();
  const reserveKey = builds.reserveKey.bind(builds);
  let lost = true;
  builds.reserveKey = async (key, digest, token) => {
    const held = await reserveKey(key, digest, token);
    if (!lost) return held;
    lost = false;
    throw new Error('the answer was lost with the connection');
  };
  const keys = requests(builds);
  await t.throwsAsync(keys.attach(request), { message: /answer was lost/ });
  t.like(await builds.reserveKey(request.key, request.digest, 'other'), { kind: 'taken' });
  back();
  const retry = await keys.attach(request);
  t.true('held' in retry, 'the retry holds the key once the release landed');
});

test('a late release leaves the key a later request holds', async (t) => {
  const builds = createMemoryBuildRegistry({ history: 10 });
  t.like(await builds.reserveKey(request.key, request.digest, 'first'), { kind: 'reserved' });
  await builds.releaseKey(request.key, 'first');
  t.like(await builds.reserveKey(request.key, request.digest, 'second'), { kind: 'reserved' });
  await builds.releaseKey(request.key, 'first');
  t.deepEqual(await builds.reserveKey(request.key, request.digest, 'third'), {
    kind: 'taken',
    sameBody: true,
  });
});
