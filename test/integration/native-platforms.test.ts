/**
 * Each platform of a build on a builder of that platform (docs/fleet.md), against the stack's two
 * real BuildKits behind mutual TLS: a declares linux/amd64, b linux/386 (private bridges of this
 * file), and a third endpoint (the stack's own bridge to a) declares nothing. Which builder ran a
 * step is read back from the image: each RUN step writes the address it saw on its builder's bridge.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import type { BuildRecord } from '../../src/builds/types.js';
import type { RunningApp } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';
import { sampleValue, scrapeMetrics } from '../helpers/metrics.js';
import { fileOf, indexEntries } from '../helpers/platform-image.js';
import type { PrivateBridge } from '../stack/builders.js';
import {
  fetchLog,
  httpsCreds,
  ownDockerfileRepo,
  postBuild,
  stack,
  privateBridges,
  STACK_BUILDER_TLS,
  startBuildAppFor,
  uniqueName,
  type BuildOverrides,
} from '../helpers/build-support.js';

const SEEN = 'builder-network';

/** The first three octets of the bridge of a builder's engine (`10.215.223.`): what its RUN steps see. */
function bridgePrefix(dockerHost: string): string {
  const subnet = execFileSync(
    'docker',
    ['--host', dockerHost, 'network', 'inspect', 'bridge', '--format', '{{(index .IPAM.Config 0).Subnet}}'],
    { encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } },
  ).trim();
  return subnet.split('.').slice(0, 3).join('.') + '.';
}
const ON_A = bridgePrefix(stack.STACK_DOCKER_HOST);
const ON_B = bridgePrefix(stack.STACK_DOCKER_HOST_B);

const app = (t: ExecutionContext, overrides: BuildOverrides): Promise<RunningApp> =>
  startBuildAppFor(t, { builderTls: STACK_BUILDER_TLS, ...overrides });

/** a declares linux/amd64, b linux/386; `extra` endpoints declare nothing. */
function declaring(a: PrivateBridge, b: PrivateBridge, extra: string[] = []): BuildOverrides {
  const builders = [
    { endpoint: a.tlsEndpoint, platforms: ['linux/amd64'] },
    { endpoint: b.tlsEndpoint, platforms: ['linux/386'] },
    ...extra.map((endpoint) => ({ endpoint, platforms: [] })),
  ];
  return { builders };
}

/**
 * A repository of this test: its RUN step (a nonce no other build shares) writes the address it
 * saw, and its metadata label names the platform's architecture.
 */
function seeingRepo(t: ExecutionContext): string {
  const nonce = randomBytes(6).toString('hex');
  const repo = ownDockerfileRepo(
    `FROM ${stack.BASE_IMAGE_ANON}\n` +
      'ARG TARGETARCH\n' +
      'LABEL devcontainer.metadata="[{\\"remoteEnv\\":{\\"ARCH\\":\\"${TARGETARCH}\\"}}]"\n' +
      `RUN echo ${nonce} && ip -4 -o addr show eth0 | awk '{print $4}' > /${SEEN}\n`,
  );
  t.teardown(() => repo.remove());
  return repo.repository;
}

const request = (repository: string, name: string, platforms: string[]) => ({
  repository,
  gitCredentials: httpsCreds(),
  image: { registry: stack.REGISTRY_ANON, name, tag: '1' },
  platforms,
});

async function recordOf(service: RunningApp, logId: unknown): Promise<BuildRecord | undefined> {
  const res = await fetch(`${service.url}/builds`);
  return ((await res.json()) as { builds: BuildRecord[] }).builds.find((r) => r.imageBuildLogId === logId);
}

/** Whether the img log shows `platform`'s RUN step of `marker` as CACHED. */
function runCached(log: string, platform: string, marker: string): boolean {
  const step = new RegExp(`#(\\d+) \\[${platform}[^\\]]*\\] RUN [^\\n]*${marker}`).exec(log)?.[1];
  return step !== undefined && new RegExp(`#${step} CACHED`).test(log);
}

test('a linux/amd64,linux/386 build: amd64 on a, 386 on b, one index with both and their attestations; again, each cached on its builder', async (t) => {
  const [a, b] = await privateBridges(t);
  const service = await app(t, declaring(a, b));
  const repository = seeingRepo(t);
  const name = uniqueName('native');
  const res = await postBuild(service, request(repository, name, ['linux/amd64', 'linux/386']));
  t.is(res.status, 200, JSON.stringify(res.body));
  const log = (await fetchLog(service, res.body.imageBuildLogId)).text;
  t.true(log.includes(`# platform linux/amd64: builder ${a.tlsEndpoint} (declares linux/amd64)`), log);
  t.true(log.includes(`# platform linux/386: builder ${b.tlsEndpoint} (declares linux/386)`));
  t.like(await recordOf(service, res.body.imageBuildLogId), {
    builder: a.tlsEndpoint,
    builders: [
      { builder: a.tlsEndpoint, platforms: ['linux/amd64'] },
      { builder: b.tlsEndpoint, platforms: ['linux/386'] },
    ],
  });

  const entries = await indexEntries(stack.REGISTRY_ANON, name, '1');
  const amd64 = entries.find((e) => e.platform === 'linux/amd64');
  const i386 = entries.find((e) => e.platform === 'linux/386');
  if (amd64 === undefined || i386 === undefined) return t.fail(JSON.stringify(entries));
  t.deepEqual(
    entries
      .filter((e) => e.platform === 'unknown/unknown')
      .map((e) => e.attests)
      .sort(),
    [amd64.digest, i386.digest].sort(),
    'one attestation manifest per platform',
  );
  t.true((await fileOf(stack.REGISTRY_ANON, name, amd64.digest, SEEN)).startsWith(ON_A), 'amd64 ran on a');
  t.true((await fileOf(stack.REGISTRY_ANON, name, i386.digest, SEEN)).startsWith(ON_B), '386 ran on b');

  const lookup = await fetch(
    `${service.url}/devcontainer?registry=${encodeURIComponent(stack.REGISTRY_ANON)}&name=${name}&tag=1&platform=linux/386`,
  );
  t.is(lookup.status, 200, await lookup.clone().text());
  t.like(await lookup.json(), { digest: i386.digest, configuration: { remoteEnv: { ARCH: '386' } } });

  const again = await postBuild(service, request(repository, name, ['linux/amd64', 'linux/386']));
  t.is(again.status, 200, JSON.stringify(again.body));
  const second = (await fetchLog(service, again.body.imageBuildLogId)).text;
  t.true(runCached(second, 'linux/amd64', SEEN), second);
  t.true(runCached(second, 'linux/386', SEEN), second);
});

test('a linux/386 build goes to b alone; readiness and /config show each builder platforms', async (t) => {
  const [a, b] = await privateBridges(t);
  const service = await app(t, declaring(a, b));
  const name = uniqueName('native-386');
  const res = await postBuild(service, request(seeingRepo(t), name, ['linux/386']));
  t.is(res.status, 200, JSON.stringify(res.body));
  const log = (await fetchLog(service, res.body.imageBuildLogId)).text;
  t.false(log.includes(a.tlsEndpoint), 'a is not used');
  t.like(await recordOf(service, res.body.imageBuildLogId), {
    builder: b.tlsEndpoint,
    builders: [{ builder: b.tlsEndpoint, platforms: ['linux/386'] }],
  });
  const entries = await indexEntries(stack.REGISTRY_ANON, name, '1');
  const i386 = entries.find((e) => e.platform === 'linux/386');
  t.truthy(i386, JSON.stringify(entries));
  t.true((await fileOf(stack.REGISTRY_ANON, name, i386?.digest ?? '', SEEN)).startsWith(ON_B));
  const ready = (await (await fetch(`${service.url}/health/ready`)).json()) as Record<string, unknown>;
  t.like(ready, {
    builders: [
      { builder: a.tlsEndpoint, state: 'up', platforms: ['linux/amd64'] },
      { builder: b.tlsEndpoint, state: 'up', platforms: ['linux/386'] },
    ],
  });
  const config = (await (await fetch(`${service.url}/config`)).json()) as Record<string, unknown>;
  t.deepEqual(config.builderPlatforms, [
    { builder: a.tlsEndpoint, platforms: ['linux/amd64'] },
    { builder: b.tlsEndpoint, platforms: ['linux/386'] },
  ]);
});

async function downOn(service: RunningApp, endpoint: string): Promise<void> {
  await eventually(
    async () =>
      (await sampleValue(await scrapeMetrics(service.url), 'service_builder_up', { builder: endpoint })) === 0
        ? true
        : undefined,
    { timeout: 30_000, interval: 200, what: `${endpoint} down` },
  );
}

test('b down: only native platforms answers 503 with Retry-After; else the 386 build runs on the endpoint declaring nothing', async (t) => {
  const [a, b] = await privateBridges(t);
  const third = stack.BUILDER_A_TLS_ENDPOINT;
  const strict = await app(t, { ...declaring(a, b), build: { nativePlatformsOnly: true } });
  const lax = await app(t, declaring(a, b, [third]));
  const undeclared = await postBuild(
    strict,
    request(seeingRepo(t), uniqueName('native-arm'), ['linux/arm64']),
  );
  t.is(undeclared.status, 400, JSON.stringify(undeclared.body));
  t.regex(String(undeclared.body.error), /no builder declares platform linux\/arm64/);

  await b.stop();
  await Promise.all([downOn(strict, b.tlsEndpoint), downOn(lax, b.tlsEndpoint)]);
  const refused = await postBuild(strict, request(seeingRepo(t), uniqueName('native-503'), ['linux/386']));
  t.is(refused.status, 503, JSON.stringify(refused.body));
  t.regex(refused.headers.get('retry-after') ?? '', /^\d+$/);
  t.regex(String(refused.body.error), /every builder declaring platform linux\/386 is down or full/);

  const name = uniqueName('native-fallback');
  const res = await postBuild(lax, request(seeingRepo(t), name, ['linux/386']));
  t.is(res.status, 200, JSON.stringify(res.body));
  const log = (await fetchLog(lax, res.body.imageBuildLogId)).text;
  t.true(
    log.includes(`# platform linux/386: builder ${third} (declares no platform: emulated where needed)`),
    log,
  );
  t.like(await recordOf(lax, res.body.imageBuildLogId), {
    builders: [{ builder: third, platforms: ['linux/386'] }],
  });
  const i386 = (await indexEntries(stack.REGISTRY_ANON, name, '1')).find((e) => e.platform === 'linux/386');
  t.true((await fileOf(stack.REGISTRY_ANON, name, i386?.digest ?? '', SEEN)).startsWith(ON_A), 'ran on a');
});
