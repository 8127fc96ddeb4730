/**
 * In Redis mode a prebuild started by one replica may run on another, whose build-ended listener
 * is the one told of its end: that replica moves the branch tag, finding the configuration by the
 * record (a small fake registry records the tag's move; a build of the API to the same image moves
 * nothing), and the replica that started it frees the branch's slot once the store says it ended.
 */
import test from 'ava';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import type { BuildRecord } from '../../../../src/builds/types.js';
import { ProcessGroups } from '../../../../src/exec/process-groups.js';
import { Metrics } from '../../../../src/observability/metrics.js';
import { MemoryDeliveryLog } from '../../../../src/prebuilds/deliveries.js';
import { RegistryClient } from '../../../../src/registry/client.js';
import { Prebuilds } from '../../../../workers/prebuilds/prebuilds.js';
import { testConfig } from '../../../helpers/app.js';
import { fakeServer, type FakeServer } from '../../../helpers/fake-registry.js';
import { silentLogger } from '../../../helpers/silent-logger.js';

const MANIFEST = JSON.stringify({
  schemaVersion: 2,
  mediaType: 'application/vnd.oci.image.manifest.v1+json',
  config: {
    mediaType: 'application/vnd.oci.image.config.v1+json',
    digest: `sha256:${'0'.repeat(64)}`,
    size: 2,
  },
  layers: [],
});
const DIGEST = `sha256:${createHash('sha256').update(MANIFEST).digest('hex')}`;

/** A registry serving one manifest under every tag and taking every manifest put. */
const registry = (): Promise<FakeServer> =>
  fakeServer((req, res) => {
    if (req.method === 'PUT') {
      res.writeHead(201, { 'docker-content-digest': DIGEST }).end();
      return;
    }
    res.writeHead(200, {
      'content-type': 'application/vnd.oci.image.manifest.v1+json',
      'docker-content-digest': DIGEST,
    });
    res.end(req.method === 'HEAD' || req.url === '/v2/' ? undefined : MANIFEST);
  });

async function replica(t: { teardown: (fn: () => unknown) => void }) {
  const fake = await registry();
  t.teardown(() => fake.close());
  const configuration = {
    repository: 'https://git.example.com/org/app.git',
    branches: ['main'],
    image: { registry: fake.host, name: 'org/app' },
    refreshOnBaseChange: true,
  };
  const base = testConfig({ scratchDir: tmpdir() });
  const config = testConfig({
    scratchDir: tmpdir(),
    insecureRegistries: [fake.host],
    prebuilds: { ...base.prebuilds, configurations: [configuration] },
  });
  const client = new RegistryClient({ insecureRegistries: [fake.host] });
  t.teardown(() => client.close());
  const ended = new Set<string>();
  const started: string[] = [];
  const builds = {
    start: () => {
      started.push(`bld-${started.length + 1}`);
      return Promise.resolve({ id: started.at(-1) as string });
    },
    cancel: () => Promise.resolve(),
    ended: (id: string) => Promise.resolve(ended.has(id)),
  };
  const prebuilds = new Prebuilds({
    config,
    logger: silentLogger(),
    metrics: new Metrics(),
    groups: new ProcessGroups(),
    builds,
    deliveries: new MemoryDeliveryLog(),
    registry: client,
  });
  const record = (trigger: BuildRecord['trigger']): BuildRecord => ({
    id: 'bld-elsewhere',
    requestId: 'prebuild-elsewhere',
    trigger,
    repository: configuration.repository,
    branch: 'main',
    commit: '1'.repeat(40),
    image: `${fake.host}/org/app:sha-1111111`,
    phase: 'finished',
    status: 'success',
    startedAt: new Date().toISOString(),
    elapsedSeconds: 1,
    waiters: 0,
  });
  const puts = () => fake.requests.filter((r) => r.method === 'PUT').map((r) => r.url);
  return { prebuilds, record, puts, ended, started };
}

test('a prebuild another replica started moves its branch tag where it ran', async (t) => {
  const { prebuilds, record, puts } = await replica(t);
  await prebuilds.ended(record('reconcile'));
  t.deepEqual(puts(), ['/v2/org/app/manifests/main']);
});

test('a build of the API to a configured image moves no branch tag', async (t) => {
  const { prebuilds, record, puts } = await replica(t);
  await prebuilds.ended(record(undefined));
  await prebuilds.ended(record('api'));
  t.deepEqual(puts(), []);
});

test('a prebuild that ended on another replica frees its branch for the next head', async (t) => {
  const { prebuilds, ended, started } = await replica(t);
  const head = (after: string, trigger: 'reconcile' | 'refresh') => ({
    index: 0,
    branch: 'main',
    after,
    trigger,
  });
  await prebuilds.consider(head('1'.repeat(40), 'reconcile'), silentLogger());
  const waiting = await prebuilds.consider(head('2'.repeat(40), 'refresh'), silentLogger());
  t.is(waiting.reason, `ignored: a prebuild of ${'1'.repeat(40)} is in flight`);
  ended.add('bld-1');
  const next = await prebuilds.consider(head('2'.repeat(40), 'refresh'), silentLogger());
  t.is(next.decision, 'built');
  t.deepEqual(started, ['bld-1', 'bld-2']);
});
