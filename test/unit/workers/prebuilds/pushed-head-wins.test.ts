/**
 * Latest push wins, decided by the prebuilds alone (builds recorded by a small fake): a pushed head
 * cancels the branch's prebuild in flight; a reconcile or refresh leaves it, whatever head it read.
 */
import test from 'ava';
import { tmpdir } from 'node:os';
import type { PrebuildConfiguration } from '../../../../src/config/types.js';
import { ProcessGroups } from '../../../../src/exec/process-groups.js';
import { Metrics } from '../../../../src/observability/metrics.js';
import { MemoryDeliveryLog } from '../../../../src/prebuilds/deliveries.js';
import { RegistryClient } from '../../../../src/registry/client.js';
import type { PrebuildTrigger } from '../../../../src/prebuilds/types.js';
import type { PrebuildBuilds } from '../../../../workers/prebuilds/ports.js';
import { Prebuilds } from '../../../../workers/prebuilds/prebuilds.js';
import { testConfig } from '../../../helpers/app.js';
import { silentLogger } from '../../../helpers/silent-logger.js';

const configuration: PrebuildConfiguration = {
  repository: 'https://git.example.com/org/app.git',
  branches: ['main'],
  image: { registry: 'registry.example.com', name: 'org/app' },
  refreshOnBaseChange: true,
};

/** The builds started and cancelled, in order. */
class RecordedBuilds implements PrebuildBuilds {
  readonly started: { id: string; trigger: PrebuildTrigger }[] = [];
  readonly cancelled: { id: string; reason: string }[] = [];

  start(_plan: unknown, options: { trigger: PrebuildTrigger }): Promise<{ id: string }> {
    const id = `bld-${this.started.length + 1}`;
    this.started.push({ id, trigger: options.trigger });
    return Promise.resolve({ id });
  }

  cancel(id: string, reason: string): Promise<void> {
    this.cancelled.push({ id, reason });
    return Promise.resolve();
  }

  ended(): Promise<boolean> {
    return Promise.resolve(false);
  }
}

function prebuilds(t: { teardown: (fn: () => void) => void }) {
  const config = testConfig({
    scratchDir: tmpdir(),
    prebuilds: { ...testConfig({ scratchDir: tmpdir() }).prebuilds, configurations: [configuration] },
  });
  const registry = new RegistryClient({ insecureRegistries: [] });
  t.teardown(() => registry.close());
  const builds = new RecordedBuilds();
  const subject = new Prebuilds({
    config,
    logger: silentLogger(),
    metrics: new Metrics(),
    groups: new ProcessGroups(),
    builds,
    deliveries: new MemoryDeliveryLog(),
    registry,
  });
  return { subject, builds };
}

const head = (after: string, trigger: PrebuildTrigger) => ({ index: 0, branch: 'main', after, trigger });
const [c1, c2, c3] = ['1'.repeat(40), '2'.repeat(40), '3'.repeat(40)];

test('a pushed head cancels the prebuild in flight and starts its own', async (t) => {
  const { subject, builds } = prebuilds(t);
  await subject.consider(head(c1, 'push'), silentLogger());
  const second = await subject.consider(head(c2, 'push'), silentLogger());
  t.is(second.reason, 'built bld-2');
  t.deepEqual(builds.cancelled, [{ id: 'bld-1', reason: `superseded by ${c2}` }]);
});

for (const trigger of ['reconcile', 'refresh'] as const) {
  test(`a ${trigger} leaves the prebuild in flight, even of another head`, async (t) => {
    const { subject, builds } = prebuilds(t);
    await subject.consider(head(c2, 'push'), silentLogger());
    const stale = await subject.consider(head(c1, trigger), silentLogger());
    t.is(stale.decision, 'ignored');
    t.is(stale.reason, `ignored: a prebuild of ${c2} is in flight`);
    t.deepEqual(builds.cancelled, []);
    t.deepEqual(
      builds.started.map((b) => b.trigger),
      ['push'],
    );
  });
}

test('once the prebuild in flight ended, a reconcile of a newer head builds it', async (t) => {
  const { subject, builds } = prebuilds(t);
  await subject.consider(head(c1, 'push'), silentLogger());
  await subject.ended({ id: 'bld-1', status: 'failure' } as Parameters<typeof subject.ended>[0]);
  const later = await subject.consider(head(c3, 'reconcile'), silentLogger());
  t.is(later.reason, 'built bld-2');
  t.deepEqual(builds.cancelled, []);
});
