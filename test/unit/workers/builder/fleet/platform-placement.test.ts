// Placement per platform (docs/fleet.md) with a fake probe: each platform on a builder declaring it
// by the repository's order within that pool, the fallback to builders declaring nothing, and with
// only native platforms the 400 and 503 refusals.
import test from 'ava';
import { Registry } from 'prom-client';
import type { BuilderDeclaration } from '../../../../../src/config/builder-endpoints.js';
import { BuilderMetrics } from '../../../../../src/observability/builder-metrics.js';
import { BuilderFleet } from '../../../../../workers/builder/fleet/fleet.js';
import { placementKey, placementOrder } from '../../../../../workers/builder/fleet/placement.js';
import { platformOrders } from '../../../../../workers/builder/fleet/platform-placement.js';
import type { ProbeResult } from '../../../../../workers/builder/fleet/probe.js';
import { memoryLog } from '../../../../helpers/memory-log.js';

const AMD = ['tcp://a1:1', 'tcp://a2:1', 'tcp://a3:1'];
const I386 = 'tcp://b:1';
const ANY = 'tcp://c:1';
const BUILDERS: BuilderDeclaration[] = [
  ...AMD.map((endpoint) => ({ endpoint, platforms: ['linux/amd64'] })),
  { endpoint: I386, platforms: ['linux/386'] },
  { endpoint: ANY, platforms: [] },
];
const REPOS = Array.from({ length: 40 }, (_, i) => `https://git.example/org/r${i}.git`);

function fleetOf(
  builders: BuilderDeclaration[],
  nativeOnly: boolean,
  answers = new Map<string, ProbeResult>(),
) {
  return new BuilderFleet({
    config: {
      childEnv: {},
      dockerConfigDir: '/nonexistent',
      builderName: 'svc',
      builders,
      build: { maxPerBuilder: 0, nativePlatformsOnly: nativeOnly } as never,
    },
    logger: { warn: () => undefined, info: () => undefined },
    metrics: new BuilderMetrics(new Registry()),
    probe: async (endpoint) => answers.get(endpoint) ?? { ok: true },
  });
}

/** A placement the test expects (never `full`). */
function placed<T>(placement: T | 'full'): T {
  if (placement === 'full') throw new Error('every builder is full');
  return placement;
}

test('each platform goes to its own pool, by the repository order within that pool', (t) => {
  const fleet = fleetOf(BUILDERS, false);
  for (const repo of REPOS) {
    const placement = placed(fleet.place(repo, undefined, ['linux/amd64', 'linux/386']));
    const home = placementOrder(placementKey(repo, undefined), AMD)[0] as string;
    t.deepEqual(placement?.builders, [
      { builder: home, platforms: ['linux/amd64'] },
      { builder: I386, platforms: ['linux/386'] },
    ]);
    t.regex(placement?.name ?? '', /^svc-nodes-[0-9a-f]{12}$/);
    placement?.finish('success');
  }
  const homes = new Set(REPOS.map((repo) => placed(fleet.place(repo, undefined, ['linux/amd64']))?.endpoint));
  t.deepEqual([...homes].sort(), [...AMD].sort(), 'the amd64 pool is spread by repository');
});

test('one platform on one builder uses that builder alone (its own buildx builder)', (t) => {
  const fleet = fleetOf(BUILDERS, false);
  const placement = placed(fleet.place(REPOS[0] as string, undefined, ['linux/386']));
  t.deepEqual(placement?.builders, [{ builder: I386, platforms: ['linux/386'] }]);
  t.is(placement?.name, 'svc-3');
});

test('a platform nobody declares falls back to the builders declaring nothing', (t) => {
  const orders = platformOrders('k', ['linux/arm64'], BUILDERS, false);
  t.deepEqual(orders, [{ platform: 'linux/arm64', order: [ANY], native: 0 }]);
  const err = t.throws(() => platformOrders('k', ['linux/arm64'], BUILDERS, true));
  t.like(err, { code: 'PLATFORM_NOT_DECLARED', status: 400 });
  t.like(
    t.throws(() => fleetOf(BUILDERS, true).refuse(['linux/amd64', 'linux/arm64'])),
    { code: 'PLATFORM_NOT_DECLARED' },
  );
});

test('its builders down: the platform falls back, the log says where; with only native platforms 503', async (t) => {
  const answers = new Map<string, ProbeResult>([[I386, { ok: false, reason: 'connection refused' }]]);
  const fleet = fleetOf(BUILDERS, false, answers);
  const placement = placed(fleet.place(REPOS[0] as string, undefined, ['linux/386']));
  const moves: unknown[] = [];
  if (placement) placement.onMove = (endpoint, builders) => void moves.push({ endpoint, builders });
  const log = memoryLog('img-x');
  // The buildx setup fails here (no docker): the move and the log lines came before it.
  await t.throwsAsync(
    placement?.ensure({ log, home: '/nonexistent', signal: new AbortController().signal }) ??
      Promise.resolve(),
  );
  t.true(
    log
      .text()
      .includes(`# builder ${I386} unreachable (connection refused): building linux/386 on ${ANY} instead`),
  );
  t.true(
    log.text().includes(`# platform linux/386: builder ${ANY} (declares no platform: emulated where needed)`),
  );
  t.deepEqual(moves, [{ endpoint: ANY, builders: [{ builder: ANY, platforms: ['linux/386'] }] }]);
  t.is(
    placed(fleet.place(REPOS[0] as string, undefined, ['linux/386']))?.endpoint,
    ANY,
    'later builds skip it',
  );

  const strict = fleetOf(BUILDERS, true, answers);
  await strict.health.check(I386);
  const err = t.throws(() => strict.refuse(['linux/386']));
  t.like(err, { code: 'PLATFORM_BUILDERS_UNAVAILABLE', status: 503 });
  t.regex(
    (err as unknown as { details: { headers: Record<string, string> } }).details.headers['Retry-After'] ?? '',
    /^\d+$/,
  );
  t.like(
    t.throws(() => placed(strict.place(REPOS[0] as string, undefined, ['linux/386']))),
    { status: 503 },
  );
  t.notThrows(() => strict.refuse(['linux/amd64']), 'the other platforms still build');
});

test('without any declaration the build is placed whole, on one builder', (t) => {
  const plain = BUILDERS.map((b) => ({ endpoint: b.endpoint, platforms: [] }));
  const placement = placed(
    fleetOf(plain, false).place(REPOS[0] as string, undefined, ['linux/amd64', 'linux/386']),
  );
  t.is(placement?.builders, undefined);
  t.regex(placement?.name ?? '', /^svc-\d$/);
});
