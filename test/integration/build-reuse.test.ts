/**
 * Build reuse on the real stack (git, Dev Containers CLI, BuildKit, registries): unchanged
 * inputs answer without the CLI, with a tag of their own; every input kind rebuilds and is named
 * in the log; identical requests coalesce; noCache, reuse off and a deleted image build.
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
} from './build-support.js';
import { fixtureBuilder } from './registry-images.js';
import { metricValue, publishFeature, readImage, testRepo, type TestRepo } from './reuse-support.js';

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
    const app = await startBuildApp();
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
    t.is(await metricValue(app.url, 'service_builds_total{status="success"}'), 2);
  });
}
