import test, { type ExecutionContext } from 'ava';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandFailure } from '../../../../src/exec/run.js';
import {
  builderSpecs,
  instanceNodes,
  RemoteBuilder,
  type BuilderSpec,
} from '../../../../workers/builder/remote-builder.js';
import { memoryLog } from '../../../helpers/memory-log.js';

/**
 * A fake `docker` recording its calls in calls.log; `buildx create --name N ... ENDPOINT` writes
 * the instance file like buildx does, and fails while a `fail` file exists.
 */
const FAKE_DOCKER = `#!/bin/sh
echo "$*" >> "$FAKE_DIR/calls.log"
[ -e "$FAKE_DIR/fail" ] && { echo "ERROR: cannot create builder" >&2; exit 1; }
if [ "$1 $2" = "buildx create" ]; then
  for last in "$@"; do :; done
  mkdir -p "$DOCKER_CONFIG/buildx/instances"
  printf '{"Name":"%s","Driver":"remote","Nodes":[{"Name":"%s0","Endpoint":"%s"}]}' "$4" "$4" "$last" > "$DOCKER_CONFIG/buildx/instances/$4"
  echo "$4"
fi
exit 0
`;

async function setup(t: ExecutionContext) {
  const dir = await mkdtemp(join(tmpdir(), 'builder-test-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'bin'));
  await writeFile(join(dir, 'bin', 'docker'), FAKE_DOCKER, { mode: 0o755 });
  const config = {
    childEnv: { PATH: `${join(dir, 'bin')}:/usr/bin:/bin`, FAKE_DIR: dir },
    dockerConfigDir: join(dir, 'state'),
  };
  const spec = (endpoint: string, tls?: BuilderSpec['tls']): BuilderSpec | undefined =>
    endpoint === '' ? undefined : { name: 'svc-remote', endpoint, ...(tls === undefined ? {} : { tls }) };
  const calls = async () =>
    (await readFile(join(dir, 'calls.log'), 'utf8').catch(() => '')).split('\n').filter(Boolean);
  // One RemoteBuilder per endpoint, as one per service start with that configuration.
  const builders = new Map<string, RemoteBuilder>();
  const ensure = (endpoint: string, log = memoryLog(), tls?: BuilderSpec['tls']) => {
    const key = `${endpoint} ${JSON.stringify(tls)}`;
    const builder = builders.get(key) ?? new RemoteBuilder(config, spec(endpoint, tls));
    builders.set(key, builder);
    return builder.ensure({ log, home: dir, signal: new AbortController().signal });
  };
  return { dir, config, calls, ensure };
}

test('created once per RemoteBuilder, concurrent builds share the setup, output in the triggering log', async (t) => {
  const { calls, ensure } = await setup(t);
  const log = memoryLog();
  await Promise.all([
    ensure('tcp://127.0.0.1:1', log),
    ensure('tcp://127.0.0.1:1'),
    ensure('tcp://127.0.0.1:1'),
  ]);
  await ensure('tcp://127.0.0.1:1');
  t.deepEqual(await calls(), ['buildx create --name svc-remote --driver remote tcp://127.0.0.1:1']);
  t.true(
    log
      .text()
      .includes('$ docker buildx create --name svc-remote --driver remote tcp://127.0.0.1:1\nsvc-remote\n'),
  );
});

test('an existing builder with the same endpoint is reused; another endpoint replaces it', async (t) => {
  const { dir, calls, ensure } = await setup(t);
  await mkdir(join(dir, 'state', 'buildx', 'instances'), { recursive: true });
  await writeFile(
    join(dir, 'state', 'buildx', 'instances', 'svc-remote'),
    JSON.stringify({ Name: 'svc-remote', Nodes: [{ Endpoint: 'tcp://127.0.0.1:2' }] }),
  );
  const log = memoryLog();
  await ensure('tcp://127.0.0.1:2', log);
  t.deepEqual(await calls(), []);
  t.true(log.text().includes('reusing remote builder svc-remote'));
  await ensure('tcp://127.0.0.1:3');
  t.deepEqual(await calls(), [
    'buildx rm svc-remote',
    'buildx create --name svc-remote --driver remote tcp://127.0.0.1:3',
  ]);
});

test('a failed setup fails that build and is retried by the next one', async (t) => {
  const { dir, calls, ensure } = await setup(t);
  await writeFile(join(dir, 'fail'), '');
  const log = memoryLog();
  const err = await t.throwsAsync(ensure('tcp://127.0.0.1:4', log));
  t.true(err instanceof CommandFailure);
  t.true(log.text().includes('ERROR: cannot create builder'));
  await rm(join(dir, 'fail'));
  await ensure('tcp://127.0.0.1:4');
  t.is((await calls()).length, 2);
});

test('no endpoint configured: nothing to set up', async (t) => {
  const { calls, ensure } = await setup(t);
  await ensure('');
  t.deepEqual(await calls(), []);
});

test('instanceNodes reads the node endpoints, driver options and platforms of a buildx instance file', (t) => {
  t.deepEqual(
    instanceNodes(
      '{"Nodes":[{"Endpoint":"tcp://a:1"},{"Endpoint":"tcp://b:2","DriverOpts":{"cacert":"/c"},' +
        '"Platforms":[{"os":"linux","architecture":"386"},{"os":"linux","architecture":"arm","variant":"v7"}]}]}',
    ),
    [
      { endpoint: 'tcp://a:1', driverOpts: {}, platforms: [] },
      { endpoint: 'tcp://b:2', driverOpts: { cacert: '/c' }, platforms: ['linux/386', 'linux/arm/v7'] },
    ],
  );
  t.deepEqual(instanceNodes('{"Nodes":null}'), []);
  t.deepEqual(instanceNodes('garbage'), []);
});

const TLS = {
  caPath: '/tls/ca.pem',
  certPath: '/tls/cert.pem',
  keyPath: '/tls/key.pem',
  serverName: 'bk.example',
};

test('TLS settings reach buildx as driver options holding paths; other TLS settings replace the builder', async (t) => {
  const { dir, calls, ensure } = await setup(t);
  await ensure('tcp://127.0.0.1:5', memoryLog(), TLS);
  t.deepEqual(await calls(), [
    'buildx create --name svc-remote --driver remote --driver-opt cacert=/tls/ca.pem --driver-opt cert=/tls/cert.pem' +
      ' --driver-opt key=/tls/key.pem --driver-opt servername=bk.example tcp://127.0.0.1:5',
  ]);
  // buildx records the options: the same ones reuse the builder, other ones replace it.
  const instance = join(dir, 'state', 'buildx', 'instances', 'svc-remote');
  const driverOpts = { cacert: TLS.caPath, cert: TLS.certPath, key: TLS.keyPath, servername: TLS.serverName };
  await writeFile(
    instance,
    JSON.stringify({ Nodes: [{ Endpoint: 'tcp://127.0.0.1:6', DriverOpts: driverOpts }] }),
  );
  const log = memoryLog();
  await ensure('tcp://127.0.0.1:6', log, TLS);
  t.true(log.text().includes('reusing remote builder svc-remote'));
  await ensure('tcp://127.0.0.1:6', memoryLog(), { ...TLS, serverName: 'other.example' });
  t.is((await calls()).length, 3);
  t.is((await calls())[1], 'buildx rm svc-remote');
});

test('builderSpecs: one endpoint keeps the builder name, several are numbered by position, TLS shared', (t) => {
  const base = { builderName: 'svc', builderTls: { caPath: '/ca.pem' } };
  t.deepEqual(
    builderSpecs({ ...base, builders: [{ endpoint: 'tcp://a:1', platforms: [] }] }).map((s) => s.name),
    ['svc'],
  );
  const specs = builderSpecs({
    ...base,
    builders: [
      { endpoint: 'tcp://a:1', platforms: [] },
      { endpoint: 'tcp://b:2', platforms: [] },
    ],
  });
  t.deepEqual(
    specs.map((s) => [s.name, s.endpoint, s.tls?.caPath]),
    [
      ['svc-0', 'tcp://a:1', '/ca.pem'],
      ['svc-1', 'tcp://b:2', '/ca.pem'],
    ],
  );
});

test('a builder with nodes: one node per endpoint with its platforms and the TLS paths; reused when the same', async (t) => {
  const { dir, config, calls } = await setup(t);
  const nodes = [
    { endpoint: 'tcp://a:1', platforms: ['linux/amd64'] },
    { endpoint: 'tcp://b:2', platforms: ['linux/386', 'linux/arm64/v8'] },
  ];
  const spec: BuilderSpec = { name: 'svc-nodes-x', endpoint: 'tcp://a:1', nodes, tls: { caPath: '/ca.pem' } };
  const ensure = (builder: RemoteBuilder) =>
    builder.ensure({ log: memoryLog(), home: dir, signal: new AbortController().signal });
  await ensure(new RemoteBuilder(config, spec));
  t.deepEqual(await calls(), [
    'buildx create --name svc-nodes-x --driver remote --node svc-nodes-x-0 --platform linux/amd64 --driver-opt cacert=/ca.pem tcp://a:1',
    'buildx create --name svc-nodes-x --driver remote --append --node svc-nodes-x-1 --platform linux/386,linux/arm64/v8 --driver-opt cacert=/ca.pem tcp://b:2',
  ]);
  // What buildx writes for those nodes (arm64's default variant dropped): a new service reuses it.
  await writeFile(
    join(dir, 'state', 'buildx', 'instances', 'svc-nodes-x'),
    JSON.stringify({
      Nodes: [
        {
          Endpoint: 'tcp://a:1',
          DriverOpts: { cacert: '/ca.pem' },
          Platforms: [{ os: 'linux', architecture: 'amd64' }],
        },
        {
          Endpoint: 'tcp://b:2',
          DriverOpts: { cacert: '/ca.pem' },
          Platforms: [
            { os: 'linux', architecture: '386' },
            { os: 'linux', architecture: 'arm64' },
          ],
        },
      ],
    }),
  );
  await ensure(new RemoteBuilder(config, spec));
  t.is((await calls()).length, 2, 'reused');
});
