// The fleet's pure placement, bounded load and health (docs/fleet.md), with a fake probe.
import test from 'ava';
import { BuilderMetrics } from '../../../../../src/observability/builder-metrics.js';
import { Registry } from 'prom-client';
import { BuilderFleet } from '../../../../../workers/builder/fleet/fleet.js';
import {
  normalisedRepository,
  placementKey,
  placementOrder,
} from '../../../../../workers/builder/fleet/placement.js';
import type { ProbeResult } from '../../../../../workers/builder/fleet/probe.js';
import { memoryLog } from '../../../../helpers/memory-log.js';

const ENDPOINTS = ['tcp://a:1234', 'tcp://b:1234', 'tcp://c:1234', 'tcp://d:1234'];
const REPOS = Array.from({ length: 400 }, (_, i) =>
  placementKey(`https://git.example/org/repo-${i}.git`, 'main'),
);

/** A placement the test expects (never `full`). */
function placed<T>(placement: T | 'full'): T {
  if (placement === 'full') throw new Error('every builder is full');
  return placement;
}

test('the normalised repository drops scheme, credentials, port, case of the host and .git', (t) => {
  for (const url of [
    'https://user:token@Git.Example:8443/org/repo.git',
    'ssh://git@git.example:2222/org/repo',
    'git@git.example:org/repo.git',
    'https://git.example/org/repo/',
  ]) {
    t.is(normalisedRepository(url), 'git.example/org/repo', url);
  }
  t.not(
    placementKey('https://git.example/org/repo', 'main'),
    placementKey('https://git.example/org/repo', 'dev'),
  );
});

test('placement is stable, spreads repositories, and every order holds each builder once', (t) => {
  const counts = new Map<string, number>();
  for (const key of REPOS) {
    const order = placementOrder(key, ENDPOINTS);
    t.deepEqual(order, placementOrder(key, [...ENDPOINTS].reverse()), 'independent of the list order');
    t.deepEqual([...order].sort(), [...ENDPOINTS].sort());
    counts.set(order[0] ?? '', (counts.get(order[0] ?? '') ?? 0) + 1);
  }
  for (const endpoint of ENDPOINTS)
    t.true((counts.get(endpoint) ?? 0) > 60, `${endpoint}: ${counts.get(endpoint)}`);
});

test('only the repositories of a leaving builder move, and a joining one takes only its own', (t) => {
  const leaving = 'tcp://c:1234';
  const without = ENDPOINTS.filter((e) => e !== leaving);
  let moved = 0;
  for (const key of REPOS) {
    const before = placementOrder(key, ENDPOINTS)[0];
    const after = placementOrder(key, without)[0];
    if (before === leaving) {
      moved += 1;
      t.is(after, placementOrder(key, ENDPOINTS)[1], 'to the next in its order');
    } else t.is(after, before, key);
  }
  t.true(moved > 0);
  const joined = [...ENDPOINTS, 'tcp://e:1234'];
  for (const key of REPOS) {
    const after = placementOrder(key, joined)[0];
    if (after !== 'tcp://e:1234') t.is(after, placementOrder(key, ENDPOINTS)[0]);
  }
});

function fleetOf(endpoints: string[], maxPerBuilder: number, answers: Map<string, ProbeResult>) {
  const registry = new Registry();
  const metrics = new BuilderMetrics(registry);
  const warnings: string[] = [];
  const fleet = new BuilderFleet({
    config: {
      childEnv: {},
      dockerConfigDir: '/nonexistent',
      builderName: 'svc',
      builders: endpoints.map((endpoint) => ({ endpoint, platforms: [] })),
      build: { maxPerBuilder } as never,
    },
    logger: { warn: (_o: unknown, m?: string) => void warnings.push(String(m)), info: () => undefined },
    metrics,
    probe: async (endpoint) => answers.get(endpoint) ?? { ok: true },
  });
  return { fleet, registry, warnings };
}

const REPO = 'https://git.example/org/one.git';

test('bounded load: a full first builder passes the build to the next in order; all full is full', (t) => {
  const { fleet } = fleetOf(ENDPOINTS.slice(0, 2), 1, new Map());
  const order = placementOrder(placementKey(REPO, undefined), ENDPOINTS.slice(0, 2));
  const first = placed(fleet.place(REPO, undefined));
  const second = placed(fleet.place(REPO, undefined));
  t.deepEqual([first?.endpoint, second?.endpoint], order);
  t.is(fleet.place(REPO, undefined), 'full', 'the build is refused (BUILDERS_FULL, workers/flow/busy.ts)');
  first?.finish('success');
  t.is(placed(fleet.place(REPO, undefined))?.endpoint, order[0], 'its place is free again');
});

test('a builder that does not answer is down at once; the build moves on with one log line naming both', async (t) => {
  const endpoints = ENDPOINTS.slice(0, 2);
  const [home, next] = placementOrder(placementKey(REPO, undefined), endpoints) as [string, string];
  const answers = new Map<string, ProbeResult>([[home, { ok: false, reason: 'connection refused' }]]);
  const { fleet, registry } = fleetOf(endpoints, 0, answers);
  const placement = placed(fleet.place(REPO, undefined));
  const moves: string[] = [];
  if (placement) placement.onMove = (e) => void moves.push(e);
  const log = memoryLog('img-x');
  // The buildx setup of the next builder fails here (no docker config): the move happened before it.
  await t.throwsAsync(
    placement?.ensure({ log, home: '/nonexistent', signal: new AbortController().signal }) ??
      Promise.resolve(),
  );
  t.deepEqual(moves, [next]);
  t.is(
    log
      .text()
      .split('\n')
      .filter((l) => l.includes('unreachable')).length,
    1,
  );
  t.true(
    log.text().includes(`# builder ${home} unreachable (connection refused): building on ${next} instead`),
  );
  t.false(fleet.health.isUp(home));
  t.regex(
    await registry.metrics(),
    new RegExp(`service_builder_up\\{builder="${home.replace(/[/.]/g, '\\$&')}"\\} 0`),
  );
  t.is(placed(fleet.place(REPO, undefined))?.endpoint, next, 'later builds skip the down builder');
  answers.delete(home);
  await fleet.health.check(home);
  t.is(placed(fleet.place(REPO, undefined))?.endpoint, home, 'it returns when it answers');
});

test('no builder answers: the build fails naming the failure', async (t) => {
  const answers = new Map<string, ProbeResult>(
    ENDPOINTS.slice(0, 2).map((e) => [e, { ok: false, reason: 'TLS handshake failed (X)' }]),
  );
  const { fleet } = fleetOf(ENDPOINTS.slice(0, 2), 0, answers);
  const log = memoryLog('img-x');
  const err = await t.throwsAsync(
    placed(fleet.place(REPO, undefined))?.ensure({ log, home: '/x', signal: new AbortController().signal }) ??
      Promise.resolve(),
  );
  t.like(err, { code: 'STEP_FAILED', status: 500 });
  t.regex(log.text(), /unreachable: TLS handshake failed \(X\)/);
  t.regex(log.text(), /no other builder can take the build/);
});
