// The queue's bounds as a build meets them (docs/queue.md): async requests are bounded by
// `build.maxQueued`, prebuilds by `build.maxQueuedPrebuilds` only (a pass over many repositories
// queues them all), a tenant's `maxQueued` bounds its requests; places come from the counts.
import test from 'ava';
import { Metrics } from '../../../../src/observability/metrics.js';
import { createMemoryQueue } from '../../../../src/queue/memory-queue.js';
import type { QueueClass } from '../../../../src/queue/fair-order.js';
import { WaitingBuilds } from '../../../../workers/queue/waiting-builds.js';
import { silentLogger } from '../../../helpers/silent-logger.js';
import type { BuildPlan } from '../../../../workers/plan/plan-types.js';
import type { NewBuild } from '../../../../src/builds/types.js';

function waiting(build: {
  maxQueued: number;
  maxQueuedPrebuilds: number;
  quotas?: { tenant: string; maxQueued: number }[];
}) {
  let n = 0;
  const refused: string[] = [];
  const queue = new WaitingBuilds({
    config: { build: { quotas: [], ...build } as never },
    store: createMemoryQueue(),
    shared: false,
    replica: 'local',
    registry: { start: async () => `bld-${(n += 1)}` },
    // No free slot: everything waits.
    slots: { reserve: () => undefined, onFree: () => undefined },
    logger: silentLogger(),
    metrics: new Metrics(),
    counted: (err) => refused.push(err.name),
    run: () => undefined,
    endUnstarted: async () => undefined,
  });
  const enqueue = (queueClass: QueueClass, tenant = 'team') =>
    queue.enqueue(
      { requestId: 'r', repository: `https://git.example/${tenant}/app.git`, image: 'i' } as NewBuild,
      {
        plan: { request: { repository: 'x' } } as unknown as BuildPlan,
        options: { requestId: 'r', logger: silentLogger() },
      },
      { class: queueClass, tenant },
    );
  return { queue, enqueue, refused };
}

test('prebuilds are not capped by maxQueued: a pass of 50 queues all 50, then their own bound answers', async (t) => {
  const { queue, enqueue } = waiting({ maxQueued: 2, maxQueuedPrebuilds: 50 });
  t.teardown(() => queue.halt());
  const ids = [];
  for (let i = 0; i < 50; i += 1) ids.push(await enqueue(i % 2 === 0 ? 'refresh' : 'reconcile'));
  t.is(ids.length, 50);
  await t.throwsAsync(enqueue('push'), { message: /50 builds already wait/ });
  await enqueue('api');
  await enqueue('api');
  await t.throwsAsync(enqueue('api'), { message: /2 builds already wait/ });
  const places = await queue.positions([ids[0] ?? '', ids[49] ?? '']);
  t.deepEqual(places.get(ids[0] ?? ''), { position: 3, ahead: 2 }, 'behind the two requests');
  t.deepEqual(places.get(ids[49] ?? ''), { position: 52, ahead: 51 });
});

test("a tenant's maxQueued bounds its requests, not its prebuilds", async (t) => {
  const { queue, enqueue } = waiting({
    maxQueued: 100,
    maxQueuedPrebuilds: 100,
    quotas: [{ tenant: 'small', maxQueued: 1 }],
  });
  t.teardown(() => queue.halt());
  await enqueue('api', 'small');
  await t.throwsAsync(enqueue('api', 'small'), { message: /tenant small already has 1 builds waiting/ });
  await enqueue('refresh', 'small');
  await enqueue('api', 'other');
  t.pass();
});
