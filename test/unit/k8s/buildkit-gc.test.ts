// The BuildKit daemons' buildkitd.toml as the real Helm renders it: garbage collection sized from
// the cache volume (maxUsedSpace 80 %, reservedSpace 10 %, minFreeSpace 10 % of buildkit.cache.size,
// or the sizes given), in BuildKit's own default tiers, with only keys BuildKit v0.23 documents; the
// history limits; every daemon mounting it and started with --config; and the refusals.
import test from 'ava';
import { render, template, type K8sObject, type Rendered } from '../../helpers/chart/helm.js';
import { parseToml, type TomlTable } from '../../helpers/chart/toml.js';

const NAME = 'ibs-image-build-service-buildkit';
const GiB = 1024 ** 3;

/** The keys moby/buildkit docs/buildkitd.toml.md (v0.23) documents for these tables. */
const DOCUMENTED = {
  history: ['maxAge', 'maxEntries'],
  worker: ['oci'],
  workerOci: ['gc', 'reservedSpace', 'maxUsedSpace', 'minFreeSpace', 'gcpolicy'],
  gcpolicy: ['all', 'filters', 'keepDuration', 'reservedSpace', 'maxUsedSpace', 'minFreeSpace'],
};

function buildkitdToml(r: Rendered): TomlTable {
  const map = r.find('ConfigMap', '-buildkit-config');
  if (map === undefined) throw new Error('no buildkitd.toml ConfigMap');
  return parseToml((map.data as Record<string, string>)['buildkitd.toml'] ?? '');
}
const workerOci = (toml: TomlTable): TomlTable => (toml.worker as TomlTable).oci as TomlTable;
const policies = (toml: TomlTable): TomlTable[] => workerOci(toml).gcpolicy as TomlTable[];
const limits = (table: TomlTable) => ({
  reservedSpace: table.reservedSpace,
  maxUsedSpace: table.maxUsedSpace,
  minFreeSpace: table.minFreeSpace,
});
const sized = (bytes: number) => ({
  reservedSpace: Math.floor(bytes * 0.1),
  maxUsedSpace: Math.floor(bytes * 0.8),
  minFreeSpace: Math.floor(bytes * 0.1),
});

test('the defaults: a 50Gi cache collected above 40Gi, 5Gi kept, 5Gi left free; history 48h, 50 entries', async (t) => {
  const toml = buildkitdToml(await render());
  t.deepEqual(Object.keys(toml).sort(), ['history', 'worker']);
  t.deepEqual(toml.history, { maxAge: '48h', maxEntries: 50 });
  t.deepEqual(Object.keys(toml.worker as TomlTable), DOCUMENTED.worker);
  t.true(workerOci(toml).gc);
  t.deepEqual(limits(workerOci(toml)), sized(50 * GiB));
  t.deepEqual(limits(workerOci(toml)), {
    reservedSpace: 5 * GiB,
    maxUsedSpace: 40 * GiB,
    minFreeSpace: 5 * GiB,
  });
});

test("BuildKit's own default tiers, in order, each with only documented keys", async (t) => {
  const toml = buildkitdToml(await render());
  for (const key of Object.keys(workerOci(toml))) t.true(DOCUMENTED.workerOci.includes(key), key);
  const tiers = policies(toml);
  for (const tier of tiers)
    for (const key of Object.keys(tier)) t.true(DOCUMENTED.gcpolicy.includes(key), key);
  const limit = sized(50 * GiB);
  t.deepEqual(tiers, [
    {
      filters: ['type==source.local', 'type==exec.cachemount', 'type==source.git.checkout'],
      keepDuration: '48h',
      maxUsedSpace: 512_000_000,
    },
    { keepDuration: '1440h', ...limit },
    { ...limit },
    { all: true, ...limit },
  ]);
});

test('the limits scale with buildkit.cache.size, decimal and binary units alike, for a PVC or an emptyDir', async (t) => {
  const cases: [Record<string, unknown>, number][] = [
    [{ size: '10Gi' }, 10 * GiB],
    [{ size: '200Gi' }, 200 * GiB],
    [{ size: '500G' }, 500e9],
    [{ size: '2Ti' }, 2 * 1024 * GiB],
    [{ type: 'emptyDir', size: '7Gi' }, 7 * GiB],
  ];
  for (const [cache, bytes] of cases) {
    const toml = buildkitdToml(await render([], { 'buildkit.cache': cache }));
    t.deepEqual(limits(workerOci(toml)), sized(bytes), JSON.stringify(cache));
    for (const tier of policies(toml).slice(1))
      t.deepEqual(limits(tier), sized(bytes), JSON.stringify(cache));
  }
});

test('sizes and durations given are used as they are; an empty keepDuration drops its tier', async (t) => {
  const toml = buildkitdToml(
    await render([], {
      'buildkit.gc': { reservedSpace: '2Gi', maxUsedSpace: '30G', minFreeSpace: '0', keepDuration: '' },
      'buildkit.history': { maxAge: '12h30m', maxEntries: 10 },
    }),
  );
  const limit = { reservedSpace: 2 * GiB, maxUsedSpace: 30e9, minFreeSpace: 0 };
  t.deepEqual(limits(workerOci(toml)), limit);
  t.deepEqual(toml.history, { maxAge: '12h30m', maxEntries: 10 });
  t.deepEqual(
    policies(toml).map((p) => p.keepDuration ?? null),
    ['48h', null, null],
  );
  t.deepEqual(policies(toml).slice(1).map(limits), [limit, limit]);
});

interface Daemon {
  args: string[];
  volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[];
}
interface StatefulSetSpec {
  template: {
    metadata: { annotations: Record<string, string> };
    spec: {
      containers: Daemon[];
      volumes: { name: string; configMap?: { name: string; items?: { key: string; path: string }[] } }[];
    };
  };
}
const statefulSets = (r: Rendered): K8sObject[] => r.objects.filter((o) => o.kind === 'StatefulSet');

test('every daemon of every pool mounts buildkitd.toml read-only and is started with --config', async (t) => {
  const r = await render([], {
    'buildkit.pools': [
      { name: 'amd64', platforms: ['linux/amd64'] },
      { name: 'arm64', platforms: ['linux/arm64'] },
    ],
  });
  const sets = statefulSets(r);
  t.is(sets.length, 2);
  for (const set of sets) {
    const spec = set.spec as StatefulSetSpec;
    const daemon = spec.template.spec.containers[0] as Daemon;
    const mount = daemon.volumeMounts.find((m) => m.name === 'config');
    t.deepEqual(mount, { name: 'config', mountPath: '/etc/buildkit/config', readOnly: true });
    t.deepEqual(spec.template.spec.volumes.find((v) => v.name === 'config')?.configMap, {
      name: `${NAME}-config`,
      items: [{ key: 'buildkitd.toml', path: 'buildkitd.toml' }],
    });
    t.is(daemon.args[daemon.args.indexOf('--config') + 1], '/etc/buildkit/config/buildkitd.toml');
  }
});

test('a new collection policy restarts the daemons (the checksum of buildkitd.toml changes)', async (t) => {
  const checksum = (r: Rendered): string | undefined =>
    (statefulSets(r)[0]?.spec as StatefulSetSpec).template.metadata.annotations['checksum/buildkit-config'];
  const before = checksum(await render());
  const after = checksum(await render([], { 'buildkit.cache.size': '80Gi' }));
  t.regex(before ?? '', /^[0-9a-f]{64}$/);
  t.not(before, after);
});

test('without the chart BuildKit there is no buildkitd.toml', async (t) => {
  const r = await render([], { 'buildkit.enabled': false, 'builder.endpoint': 'tcp://buildkitd:1234' });
  t.is(r.find('ConfigMap', '-buildkit-config'), undefined);
});

test('sizes, durations and limits that make no sense are refused before anything runs', async (t) => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ 'buildkit.cache.size': '50 GB' }, /at '\/buildkit\/cache\/size'/],
    [{ 'buildkit.cache.size': '0' }, /at '\/buildkit\/cache\/size'/],
    [{ 'buildkit.gc.maxUsedSpace': '80%' }, /at '\/buildkit\/gc\/maxUsedSpace'/],
    [{ 'buildkit.gc.keepDuration': '2d' }, /at '\/buildkit\/gc\/keepDuration'/],
    [{ 'buildkit.history.maxAge': '' }, /at '\/buildkit\/history\/maxAge'/],
    [{ 'buildkit.history.maxEntries': 0 }, /at '\/buildkit\/history\/maxEntries': minimum: got 0, want 1/],
    [
      { 'buildkit.gc': { gcPercent: 50 } },
      /at '\/buildkit\/gc': additional properties 'gcPercent' not allowed/,
    ],
    [
      { 'buildkit.gc.reservedSpace': '45Gi' },
      /buildkit\.gc\.reservedSpace \(48318382080 bytes\) must not exceed maxUsedSpace \(42949672960 bytes\)/,
    ],
    [
      { 'buildkit.gc.maxUsedSpace': '60Gi' },
      /buildkit\.gc\.maxUsedSpace \(64424509440 bytes\) must not exceed buildkit\.cache\.size \(53687091200 bytes\)/,
    ],
  ];
  for (const [set, message] of cases) {
    const result = await template([], set);
    t.not(result.exitCode, 0, JSON.stringify(set));
    t.regex(result.stderr, message, JSON.stringify(set));
  }
});
