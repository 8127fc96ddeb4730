// An Idempotency-Key held by a request whose build could not be recorded (the store failing over)
// is freed once the store answers again, so the caller's retry starts the build at once; a late
// release never frees the key a later request holds (the registry's token rule).
import test from 'ava';
import { createMemoryBuildRegistry } from '../../../../src/builds/memory-registry.js';
import type { BuildRegistry } from '../../../../src/builds/types.js';
import { silentLogger } from '../../../helpers/silent-logger.js';
import { Metrics } from '../../../../src/observability/metrics.js';
import { IdempotentRequests } from '../../../../workers/flow/idempotency.js';
import { eventually } from '../../../helpers/eventually.js';

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

test('a held key is freed once the store answers again; the retry then holds it', async (t) => {
  const { builds, back, tries } = storeAway();
  const keys = new IdempotentRequests(builds, new Metrics(), silentLogger());
  const first = await keys.attach(request);
  if (!('held' in first)) return t.fail('the first request holds the key');
  keys.releaseSoon(first.held);
  await eventually(() => tries() >= 2, { timeout: 10_000, interval: 50, what: 'a second try' });
  t.deepEqual(await builds.reserveKey(request.key, request.digest), { kind: 'taken', sameBody: true });
  back();
  const retry = await keys.attach(request);
  t.true('held' in retry, 'the retry holds the key once the release landed');
});

test('a late release leaves the key a later request holds', async (t) => {
  const builds = createMemoryBuildRegistry({ history: 10 });
  const first = await builds.reserveKey(request.key, request.digest);
  if (first.kind !== 'reserved') return t.fail('reserved');
  await builds.releaseKey(request.key, first.token);
  const second = await builds.reserveKey(request.key, request.digest);
  t.is(second.kind, 'reserved');
  await builds.releaseKey(request.key, first.token);
  t.deepEqual(await builds.reserveKey(request.key, request.digest), { kind: 'taken', sameBody: true });
});
