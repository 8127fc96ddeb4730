/**
 * Build reuse on the real stack (git, Dev Containers CLI, BuildKit, registries): unchanged
 * inputs answer without the CLI, with a tag of their own; every input kind rebuilds and is named
 * in the log; identical requests follow one build; noCache, reuse off and a deleted image build.
 * "The CLI ran" is read from the img log: a build's log has the `devcontainer build` command
 * line, a reuse's has none.
 */
import test, { type ExecutionContext } from 'ava';
import type { RunningApp } from '../helpers/app.js';
import type { RegistryCreds } from '../stack/registry-client.js';
import {
  fetchLog,
  httpsCreds,
  postBuild,
  stack,
  startBuildApp,
  uniqueName,
  type BuildResponse,
} from '../helpers/build-support.js';
import { listBuilds, within } from '../helpers/replicas.js';
import { fixtureBuilder } from '../helpers/registry-images.js';
import { publishFeature, readImage, testRepo, type TestRepo } from '../helpers/reuse-support.js';
import { metricValue } from '../helpers/metrics.js';
import { loadOpenApi, schemaValidator } from '../helpers/openapi.js';
import { MANIFEST_ACCEPT, registryFetch } from '../stack/registry-client.js';
import type { BuildRecord } from '../../src/builds/types.js';
import { architectureStages } from '../helpers/architecture-stages.js';

const json = (v: unknown): string => `${JSON.stringify(v, null, 2)}\n`;
const FEATURE_JSON = json({ id: 'hello', version: '1.0.0', name: 'hello' });
const FEATURE_INSTALL = '#!/bin/sh\nset -e\necho hello > /etc/hello-reuse\n';

const definitionFiles = (image: string, extra: Record<string, unknown> = {}): Record<string, string> => ({
  '.devcontainer/devcontainer.json': json({
    image,
    features: { './hello': {}, ...extra },
    customizations: { vscode: { extensions: ['ibs.reuse'] } },
  }),
  '.devcontainer/hello/devcontainer-feature.json': FEATURE_JSON,
  '.devcontainer/hello/install.sh': FEATURE_INSTALL,
  'README.md': '# reuse\n',
});

async function imgLog(t: ExecutionContext, app: RunningApp, res: BuildResponse): Promise<string> {
  if (res.status !== 200) {
    const log = await fetchLog(app, res.body.logId);
    t.fail(`POST /build answered ${res.status} ${JSON.stringify(res.body)}\n${log.text}`);
  }
  return (await fetchLog(app, res.body.imageBuildLogId)).text;
}

const ranCli = (log: string): boolean => log.includes('devcontainer build');

async function withRepo(t: ExecutionContext, label: string): Promise<TestRepo> {
  const repo = await testRepo(label);
  t.teardown(repo.dispose);
  return repo;
}

const REGISTRIES: Array<{ kind: string; registry: string; creds?: RegistryCreds }> = [
  { kind: 'anon', registry: stack.REGISTRY_ANON },
  {
    kind: 'basic',
    registry: stack.REGISTRY_BASIC,
    creds: { user: stack.REGISTRY_BASIC_USER, password: stack.REGISTRY_BASIC_PASSWORD },
  },
  {
    kind: 'token',
    registry: stack.REGISTRY_TOKEN,
    creds: { user: stack.REGISTRY_TOKEN_USER, password: stack.REGISTRY_TOKEN_PASSWORD },
  },
];

for (const target of REGISTRIES) {
  test(`${target.kind} registry: a commit outside the inputs answers without the CLI, with its own tag and digest`, async (t) => {
    const app = await startBuildApp({ build: { reuse: true } });
    t.teardown(app.close);
    const repo = await withRepo(t, `reuse-${target.kind}`);
    const name = uniqueName('reuse');
    const body = {
      repository: repo.url,
      gitCredentials: httpsCreds(),
      image: { registry: target.registry, name },
      ...(target.creds
        ? {
            registryCredentials: {
              registry: target.registry,
              username: target.creds.user,
              password: target.creds.password,
            },
          }
        : {}),
    };
    const first = await repo.commit(definitionFiles(stack.BASE_IMAGE_ANON));
    const built = await postBuild(app, body);
    const builtLog = await imgLog(t, app, built);
    t.true(ranCli(builtLog), builtLog);
    t.regex(builtLog, /no earlier image with this key/);
    t.regex(builtLog, /build key recorded as /);

    const second = await repo.commit({
      'README.md': '# reuse\n\nOnly the README changed.\n',
      'src/app.txt': 'code\n',
    });
    const started = performance.now();
    const reused = await postBuild(app, body);
    const seconds = (performance.now() - started) / 1000;
    const reusedLog = await imgLog(t, app, reused);
    t.false(ranCli(reusedLog), reusedLog);
    t.regex(
      reusedLog,
      new RegExp(
        `inputs unchanged since ${target.registry}/${name}@sha256:[0-9a-f]{64}, key [0-9a-f]{64}: reused, no build`,
      ),
    );
    t.is(reused.body.commit, second);
    t.is(reused.body.tag, `sha-${second.slice(0, 7)}`);
    t.log(`reuse answered in ${seconds.toFixed(2)} s`);

    const a = await readImage(target.registry, name, `sha-${first.slice(0, 7)}`, target.creds);
    const b = await readImage(target.registry, name, `sha-${second.slice(0, 7)}`, target.creds);
    t.truthy(a);
    t.truthy(b);
    t.not(b?.digest, a?.digest, 'every tag keeps its own digest');
    t.deepEqual(b?.layers, a?.layers, 'the same layers');
    t.is(a?.labels['org.opencontainers.image.revision'], first);
    t.is(b?.labels['org.opencontainers.image.revision'], second);
    t.is(b?.labels['org.opencontainers.image.source'], repo.url);
    t.is(b?.labels['devcontainer.metadata'], a?.labels['devcontainer.metadata']);

    const headers: Record<string, string> = target.creds
      ? { 'x-registry-username': target.creds.user, 'x-registry-password': target.creds.password }
      : {};
    const describe = async (commit: string) => {
      const res = await fetch(
        `${app.url}/devcontainer?registry=${target.registry}&name=${name}&tag=sha-${commit.slice(0, 7)}`,
        { headers },
      );
      t.is(res.status, 200);
      const out = (await res.json()) as Record<string, unknown>;
      // The image's own identity differs by design; everything it describes is the same.
      delete out.image;
      delete out.tag;
      delete out.digest;
      return out;
    };
    t.deepEqual(await describe(second), await describe(first));
    t.is(await metricValue(app.url, 'service_build_reuses_total'), 1);
    t.is(await metricValue(app.url, 'service_builds_total', { status: 'success' }), 2);

    // The unchanged push read the commit's trees only: nothing was checked out or fetched.
    const reusedClone = (await fetchLog(app, reused.body.gitCloneLogId)).text;
    t.regex(reusedClone, /nothing checked out/);
    t.false(/ (?:checkout|sparse-checkout|cat-file)\b/.test(reusedClone), reusedClone);
    t.regex(reusedLog, /build inputs read from the commit's trees/);

    // A new instance knows no blob yet: its first unchanged push checks the definition out (and
    // still reuses); its next one reads the trees only.
    const fresh = await startBuildApp({ build: { reuse: true } });
    t.teardown(fresh.close);
    for (const [i, checkedOut] of [true, false].entries()) {
      const commit = await repo.commit({ 'src/app.txt': `code ${i}\n` });
      const res = await postBuild(fresh, body);
      const log = await imgLog(t, fresh, res);
      t.false(ranCli(log), log);
      t.regex(log, /reused, no build/);
      t.is(res.body.commit, commit);
      const clone = (await fetchLog(fresh, res.body.gitCloneLogId)).text;
      t.is(/ checkout --quiet\n/.test(clone), checkedOut, clone);
    }
  });
}

/** POSTs and returns the img log, failing the test on anything but 200. */
async function build(t: ExecutionContext, app: RunningApp, body: unknown): Promise<string> {
  return imgLog(t, app, await postBuild(app, body));
}

const recordSchema = schemaValidator(loadOpenApi())({ $ref: '#/components/schemas/BuildRecord' });

/**
 * Builds, and reads back the build's record (GET /builds/{id}, checked against docs/openapi.yaml):
 * its stages, its BuildKit steps, the pushed image's sizes against the registry's own manifests,
 * its key's inputs; returns the log and why it was rebuilt (its inputs joined by `; `).
 */
async function buildAndRecord(
  t: ExecutionContext,
  app: RunningApp,
  body: unknown,
): Promise<{ log: string; record: BuildRecord; rebuiltBecause: string }> {
  const res = await postBuild(app, body);
  const log = await imgLog(t, app, res);
  const [listed] = (await listBuilds(app, 'status=success')).filter(
    (item) => item.imageBuildLogId === res.body.imageBuildLogId,
  );
  const record = (await (await fetch(`${app.url}/builds/${listed?.id ?? 'none'}`)).json()) as BuildRecord;
  t.true(recordSchema(record), JSON.stringify(recordSchema.errors));
  sameStages(t, app, record);
  t.true((record.totalSteps ?? 0) > 0 && record.totalSteps === record.steps?.length, 'BuildKit steps listed');
  t.is(record.pushed?.digest, res.body.digest as string);
  for (const platform of record.pushed?.platforms ?? []) {
    const manifest = await registryFetch(
      stack.REGISTRY_ANON,
      `/v2/${String(res.body.name)}/manifests/${platform.digest}`,
      {
        headers: { accept: MANIFEST_ACCEPT },
      },
    );
    const layers = ((await manifest.json()) as { layers: { size: number }[] }).layers;
    t.is(
      platform.compressedBytes,
      layers.reduce((sum, layer) => sum + layer.size, 0),
      platform.platform,
    );
  }
  t.true((record.pushed?.platforms.length ?? 0) > 0, 'the pushed image names its platforms');
  t.regex(record.key?.key ?? '', /^[0-9a-f]{64}$/);
  return { log, record, rebuiltBecause: (record.rebuiltBecause?.inputs ?? []).join('; ') };
}

/**
 * The build's stages told one way: its service log's laps (`#n name: ms`, its request's lines),
 * its record's `stages` and ARCHITECTURE.md list the same numbers and names; a full build's
 * include its clone and its build and push.
 */
function sameStages(t: ExecutionContext, app: RunningApp, record: BuildRecord): void {
  const fromRecord = (record.stages ?? []).map((stage) => `${stage.number ?? '?'} ${stage.name}`);
  const fromLog = app
    .logLines()
    .filter((line) => line.requestId === record.requestId && typeof line.stageNumber === 'number')
    .map((line) =>
      String(line.msg)
        .replace(/: \d+ ms$/, '')
        .replace(/^#/, ''),
    );
  t.deepEqual(fromLog, fromRecord, 'the log laps and the record list the same stages');
  const listed = new Set(architectureStages());
  t.deepEqual(
    fromRecord.filter((stage) => !listed.has(stage)),
    [],
    'every stage is in ARCHITECTURE.md',
  );
  for (const stage of ['1 admit', '5 clone', '12 build and push', '13 record the image', '15 answer'])
    t.true(fromRecord.includes(stage), `${stage} in ${fromRecord.join(', ')}`);
}

/** The "inputs changed" line of a build's log. */
const changedLine = (log: string): string =>
  /inputs changed since the last build[^\n]*/.exec(log)?.[0] ?? log;

test('every input kind rebuilds and the log names it: config file, local feature, base image, OCI feature, platforms', async (t) => {
  const app = await startBuildApp({ build: { reuse: true } });
  t.teardown(app.close);
  const images = await fixtureBuilder(stack);
  t.teardown(images.dispose);
  const ns = uniqueName('inputs');
  const base = `${stack.REGISTRY_ANON}/${ns}/base:1`;
  const pushBase = (version: string) =>
    images.build({
      dockerfile: `FROM ${stack.BASE_IMAGE_ANON}\nLABEL ibs.base-version=${version}\n`,
      platforms: ['linux/amd64'],
      tags: [base],
    });
  await pushBase('1');
  await publishFeature(stack.REGISTRY_ANON, `${ns}/features`, 'greet', '1.0.0', 'echo greet 1 > /etc/greet');
  const feature = `${stack.REGISTRY_ANON}/${ns}/features/greet:1`;

  const repo = await withRepo(t, 'inputs');
  const body = {
    repository: repo.url,
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name: `${ns}/app` },
  };
  await repo.commit(definitionFiles(base, { [feature]: {} }));
  const first = await buildAndRecord(t, app, body);
  t.true(ranCli(first.log), first.log);
  t.regex(first.log, /no earlier image with this key/);
  t.is(first.rebuiltBecause, 'no earlier build');
  const inputs = new Map(first.record.key?.inputs.map((input) => [input.name, input.digest]));
  t.regex(inputs.get(`base image ${base}`) ?? '', /^sha256:[0-9a-f]{64}$/);
  t.regex(inputs.get(`feature ${feature}`) ?? '', /^sha256:[0-9a-f]{64}$/);
  t.regex(inputs.get('path .devcontainer') ?? '', /^[0-9a-f]{40}$/);

  const steps: Array<{ what: string; change: () => Promise<unknown>; body?: unknown; named: RegExp }> = [
    {
      what: 'config file',
      change: () =>
        repo.commit({
          '.devcontainer/devcontainer.json': json({
            image: base,
            features: { './hello': {}, [feature]: {} },
            containerEnv: { CHANGED: '1' },
          }),
        }),
      named: /the config file/,
    },
    {
      what: 'local feature file',
      change: () =>
        repo.commit({ '.devcontainer/hello/install.sh': `${FEATURE_INSTALL}echo v2 >> /etc/hello-reuse\n` }),
      named: /^(?!.*the config file).*path \.devcontainer: [0-9a-f]{12} -> [0-9a-f]{12}/,
    },
    {
      what: 'base image under the same tag',
      change: async () => {
        await pushBase('2');
        await repo.commit({ 'README.md': '# new base\n' });
      },
      named: new RegExp(
        `base image ${base.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: sha256:[0-9a-f]{64} -> sha256:[0-9a-f]{64}`,
      ),
    },
    {
      what: 'OCI feature version under the same tag',
      change: async () => {
        await publishFeature(
          stack.REGISTRY_ANON,
          `${ns}/features`,
          'greet',
          '1.0.1',
          'echo greet 2 > /etc/greet',
        );
        await repo.commit({ 'README.md': '# new feature version\n' });
      },
      named: /feature .*\/features\/greet:1: sha256:[0-9a-f]{64} -> sha256:[0-9a-f]{64}/,
    },
    {
      what: 'platforms',
      change: () => repo.commit({ 'README.md': '# platforms\n' }),
      body: { ...body, platforms: ['linux/amd64'] },
      named: /platforms: default -> linux\/amd64/,
    },
  ];
  for (const step of steps) {
    await step.change();
    const { log, rebuiltBecause } = await buildAndRecord(t, app, step.body ?? body);
    t.true(ranCli(log), `${step.what}: the CLI ran`);
    t.regex(changedLine(log), step.named, step.what);
    t.regex(rebuiltBecause, step.named, `${step.what}: the record's rebuiltBecause`);
  }
  // And nothing changed: reused.
  await repo.commit({ 'README.md': '# nothing of the inputs\n' });
  const unchanged = await build(t, app, { ...body, platforms: ['linux/amd64'] });
  t.false(ranCli(unchanged), unchanged);
  t.regex(unchanged, /reused, no build/);
});

test('Dockerfile definitions: the Dockerfile and a file of its context rebuild; elsewhere reuses', async (t) => {
  const app = await startBuildApp({ build: { reuse: true } });
  t.teardown(app.close);
  const repo = await withRepo(t, 'dockerfile');
  const body = {
    repository: repo.url,
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name: uniqueName('dockerfile') },
  };
  await repo.commit({
    '.devcontainer/devcontainer.json': json({
      build: { dockerfile: '../docker/Dockerfile', context: '../docker/ctx' },
    }),
    'docker/Dockerfile': `FROM ${stack.BASE_IMAGE_ANON}\nCOPY a.txt /a.txt\n`,
    'docker/ctx/a.txt': 'a\n',
    'README.md': '# dockerfile\n',
  });
  t.true(ranCli(await build(t, app, body)));

  await repo.commit({ 'docker/Dockerfile': `FROM ${stack.BASE_IMAGE_ANON}\nCOPY a.txt /b.txt\n` });
  const dockerfile = await build(t, app, body);
  t.true(ranCli(dockerfile));
  t.regex(changedLine(dockerfile), /^(?!.*docker\/ctx).*path docker\/Dockerfile: /);

  await repo.commit({ 'docker/ctx/a.txt': 'b\n' });
  const context = await build(t, app, body);
  t.true(ranCli(context));
  t.regex(changedLine(context), /^(?!.*docker\/Dockerfile).*path docker\/ctx: /);

  await repo.commit({ 'README.md': '# only the readme\n', 'docker/notes.txt': 'outside the context\n' });
  const unchanged = await build(t, app, body);
  t.false(ranCli(unchanged), unchanged);
  t.regex(unchanged, /reused, no build/);
});

test('5 identical requests at once (limit 4): one CLI run, five 200s, one digest, 4 followed', async (t) => {
  const app = await startBuildApp({ build: { maxConcurrent: 4, reuse: true } });
  t.teardown(app.close);
  const repo = await withRepo(t, 'burst');
  await repo.commit(definitionFiles(stack.BASE_IMAGE_ANON));
  const name = uniqueName('burst');
  const body = {
    repository: repo.url,
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name },
  };
  const answers = await Promise.all(Array.from({ length: 5 }, () => postBuild(app, body)));
  t.deepEqual(
    answers.map((a) => a.status),
    [200, 200, 200, 200, 200],
  );
  const logIds = new Set(answers.map((a) => a.body.imageBuildLogId));
  t.is(logIds.size, 1, 'one build answered all five');
  t.true(ranCli(await imgLog(t, app, answers[0]!)));
  t.is(new Set(answers.map((a) => a.body.image)).size, 1);
  const image = await readImage(stack.REGISTRY_ANON, name, String(answers[0]!.body.tag));
  t.truthy(image?.digest);
  t.deepEqual(
    answers.map((a) => a.body.digest),
    answers.map(() => image?.digest),
    'every answer names the digest the registry serves',
  );
  t.is(await metricValue(app.url, 'service_builds_coalesced_total'), 4);
  t.is(await metricValue(app.url, 'service_builds_total', { status: 'success' }), 5);
  t.is(await metricValue(app.url, 'service_build_duration_seconds_count', { status: 'success' }), 5);
});

test('two commits with the same inputs at once: the second waits for the first build and answers as a reuse', async (t) => {
  const app = await startBuildApp({ build: { maxConcurrent: 4, reuse: true } });
  t.teardown(app.close);
  const repo = await withRepo(t, 'follow');
  const name = uniqueName('follow');
  const body = (tag: string) => ({
    repository: repo.url,
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name, tag },
  });
  // A slow RUN step keeps the first build in flight while the second request clones.
  await repo.commit({
    '.devcontainer/devcontainer.json': json({ build: { dockerfile: 'Dockerfile' } }),
    '.devcontainer/Dockerfile': `FROM ${stack.BASE_IMAGE_ANON}\nRUN sleep 6\n`,
  });
  const first = postBuild(app, body('one'));
  const second = await repo.commit({ 'README.md': '# second\n' });
  // The first build's key is in flight once this app reports it building (it follows or holds its key before).
  // Not the processes: the other tests of this file build at the same time.
  await within('the first build building', 60_000, async () =>
    (await listBuilds(app, 'status=running')).some((build) => build.phase === 'building'),
  );
  const [a, b] = await Promise.all([first, postBuild(app, body('two'))]);
  const logA = await imgLog(t, app, a);
  const logB = await imgLog(t, app, b);
  t.true(ranCli(logA));
  t.false(ranCli(logB), logB);
  t.regex(logB, /a build with the same key is in flight/);
  t.regex(logB, /reused, no build/);
  t.is(b.body.commit, second);
  const imageB = await readImage(stack.REGISTRY_ANON, name, 'two');
  t.is(imageB?.labels['org.opencontainers.image.revision'], second);
  t.is(b.body.digest, imageB?.digest, "the reuse answers with its own tag's digest");
  t.is(a.body.digest, (await readImage(stack.REGISTRY_ANON, name, 'one'))?.digest);
  t.is(await metricValue(app.url, 'service_builds_coalesced_total'), 1);
  t.is(await metricValue(app.url, 'service_build_reuses_total'), 1);
});

test('noCache builds, reuse off builds, and a recorded key whose image was deleted builds', async (t) => {
  const app = await startBuildApp({ build: { reuse: true } });
  t.teardown(app.close);
  const repo = await withRepo(t, 'always');
  const name = uniqueName('always');
  const body = {
    repository: repo.url,
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name },
  };
  const first = await repo.commit(definitionFiles(stack.BASE_IMAGE_ANON));
  const firstLog = await build(t, app, body);
  t.true(ranCli(firstLog));

  await repo.commit({ 'README.md': '# no cache\n' });
  const noCache = await build(t, app, { ...body, buildOptions: { noCache: true } });
  t.true(ranCli(noCache), 'noCache: the CLI ran');
  t.regex(noCache, /noCache: building without looking for an earlier image/);

  const off = await startBuildApp({ build: { reuse: false } });
  t.teardown(off.close);
  await repo.commit({ 'README.md': '# reuse off\n' });
  const offLog = await build(t, off, body);
  t.true(ranCli(offLog), 'reuse off: the CLI ran');
  t.false(offLog.includes('build key'), offLog);

  // The key tag shares the first build's digest: deleting that image removes the record too.
  const keyTag = /build key recorded as [^:]+:\d+\/[^:]+:(build-key-[0-9a-f]{64})/.exec(firstLog)?.[1];
  t.truthy(keyTag, firstLog);
  t.truthy(await readImage(stack.REGISTRY_ANON, name, keyTag ?? ''));
  const res = await fetch(
    `${app.url}/image?registry=${stack.REGISTRY_ANON}&name=${name}&tag=sha-${first.slice(0, 7)}`,
    { method: 'DELETE' },
  );
  t.is(res.status, 200);
  t.is(await readImage(stack.REGISTRY_ANON, name, keyTag ?? ''), undefined);
  await repo.commit({ 'README.md': '# after the delete\n' });
  const afterDelete = await build(t, app, body);
  t.true(ranCli(afterDelete), 'a deleted image: the CLI ran');
  t.regex(afterDelete, /no earlier image with this key/);
});
