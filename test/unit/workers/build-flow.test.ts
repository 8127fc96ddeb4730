/**
 * The build job below the full stack: real git against a git daemon started here (a bare
 * repository made here), and a fake Dev Containers CLI (a node script that records its argv
 * and environment). Shows what the job hands the CLI, the logs, the result, the request
 * directory removed, and the job deadline killing a hanging CLI with nothing left behind.
 */
import { supplyChainOf } from '../../../src/supply-chain/supply-chain.js';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BuildResult } from '../../../workers/plan/plan-types.js';
import test, { type ExecutionContext } from 'ava';
import type { BuildReporter } from '../../../src/builds/types.js';
import { isServiceError } from '../../../src/errors/errors.js';
import { ProcessGroups } from '../../../src/exec/process-groups.js';
import { createLogStore } from '../../../src/logs/store.js';
import { createLogger } from '../../../src/observability/logger.js';
import { Metrics } from '../../../src/observability/metrics.js';
import type { Config } from '../../../src/config/types.js';
import type { BuildDeps } from '../../../workers/job/build-deps.js';
import { createReuseDeps } from '../../../workers/job/build-deps.js';
import { createEmbeddedLeases } from '../../../workers/leases/leases.js';
import { runJob } from '../../../workers/job/job-flow.js';
import { RemoteBuilder } from '../../../workers/builder/remote-builder.js';
import { scratchIdentityKey } from '../../../workers/builder/secret-identity-key.js';
import { planBuild } from '../../../workers/plan/plan.js';
import { createBuildQueue } from '../../../workers/queue/slots.js';
import { testConfig } from '../../helpers/app.js';
import { freePort, tcpOpen } from '../../stack/proc.js';
import { eventually } from '../../helpers/eventually.js';

const FAKE_CLI = `
const fs = require('node:fs');
fs.writeFileSync(process.env.FAKE_RECORD, JSON.stringify({ argv: process.argv.slice(2), env: process.env }));
console.log('fake devcontainer build output');
if (process.env.FAKE_MODE === 'fail') { console.error('fake failure'); process.exit(3); }
if (process.env.FAKE_MODE === 'hang') { console.log('hanging'); setInterval(() => {}, 1000); }
`;

/** The manifest the small registry below serves for every tag (the job reads its digest). */
const MANIFEST = JSON.stringify({
  schemaVersion: 2,
  mediaType: 'application/vnd.oci.image.index.v1+json',
  manifests: [],
});
const MANIFEST_DIGEST = `sha256:${createHash('sha256').update(MANIFEST).digest('hex')}`;

/** A registry that answers manifest reads of team/job (what the job asks once the push is done). */
async function manifestRegistry(t: ExecutionContext): Promise<string> {
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url?.startsWith('/v2/team/job/manifests/') === true) {
      res.writeHead(200, {
        'content-type': 'application/vnd.oci.image.index.v1+json',
        'docker-content-digest': MANIFEST_DIGEST,
      });
      res.end(MANIFEST);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `localhost:${(server.address() as AddressInfo).port}`;
}

interface Harness {
  registry: string;
  config: Config;
  deps: BuildDeps;
  scratchDir: string;
  record: string;
  repository: string;
  commit: string;
}

async function harness(t: ExecutionContext, mode: 'ok' | 'fail' | 'hang'): Promise<Harness> {
  const root = await mkdtemp(join(tmpdir(), 'ibs-job-'));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
  git('init', '-q', '-b', 'main', 'work');
  await writeFile(join(root, 'work', 'README.md'), '# job\n');
  execFileSync('mkdir', ['-p', join(root, 'work', '.devcontainer')]);
  await writeFile(
    join(root, 'work', '.devcontainer', 'devcontainer.json'),
    '{"image": "localhost:1/dev/base:1"}\n',
  );
  git('-C', 'work', 'add', '-A');
  git('-C', 'work', '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'init');
  const commit = git('-C', 'work', 'rev-parse', 'HEAD');
  git('clone', '-q', '--bare', 'work', 'served/repo.git');
  const port = await freePort();
  const daemon: ChildProcess = spawn(
    'git',
    [
      'daemon',
      '--reuseaddr',
      '--listen=127.0.0.1',
      `--port=${port}`,
      `--base-path=${join(root, 'served')}`,
      '--export-all',
    ],
    { stdio: 'ignore' },
  );
  // A daemon that could not start: the build's clone below fails, and says so.
  daemon.once('error', () => undefined);
  t.teardown(async () => {
    daemon.kill();
    await rm(root, { recursive: true, force: true });
  });
  await eventually(() => tcpOpen(port), { what: `git daemon on port ${port}`, interval: 25 });

  const cli = join(root, 'fake-devcontainer.cjs');
  await writeFile(cli, FAKE_CLI);
  const record = join(root, 'record.json');
  const scratchDir = join(root, 'scratch');
  const registry = await manifestRegistry(t);
  const config = testConfig({
    insecureRegistries: [registry],
    scratchDir,
    git: { allowInsecureProtocols: true },
    childEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin', FAKE_RECORD: record, FAKE_MODE: mode },
  });
  const groups = new ProcessGroups();
  const deps: BuildDeps = {
    config,
    logStore: await createLogStore(config),
    logger: createLogger({ serviceName: 't', environment: 'test', destination: { write: () => true } }),
    metrics: new Metrics(),
    groups,
    secretIdentityKey: scratchIdentityKey(scratchDir),
    remoteBuilder: new RemoteBuilder(config, undefined, groups),
    devcontainerCli: cli,
    reuse: createReuseDeps(config.insecureRegistries, createEmbeddedLeases(), supplyChainOf(config)),
  };
  return {
    registry,
    config,
    deps,
    scratchDir,
    record,
    repository: `git://127.0.0.1:${port}/repo.git`,
    commit,
  };
}

/** A reporter that records what the job reports, in order. */
function recordingReporter(): BuildReporter & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    phase: async (phase) => void calls.push(`phase ${phase}`),
    logOpened: async (kind, logId) => void calls.push(`${kind} log ${logId}`),
    builder: async (endpoint) => void calls.push(`builder ${endpoint}`),
    resolved: async ({ branch, commit, image }) => void calls.push(`resolved ${branch} ${commit} ${image}`),
    details: async () => undefined,
  };
}

const text = async (h: Harness, id: string): Promise<string> => (await h.deps.logStore.read(id)).text;

const plan = (h: Harness) =>
  planBuild({ repository: h.repository, image: { registry: h.registry, name: 'team/job' } }, h.config);

test('a build hands the CLI the clone and the image, logs both commands, answers the result, removes its directory', async (t) => {
  const h = await harness(t, 'ok');
  const reporter = recordingReporter();
  const result = (await runJob(plan(h), h.deps, new AbortController().signal, reporter)) as BuildResult;
  t.like(result, {
    image: `${h.registry}/team/job:sha-${h.commit.slice(0, 7)}`,
    registry: h.registry,
    name: 'team/job',
    tag: `sha-${h.commit.slice(0, 7)}`,
    branch: 'main',
    commit: h.commit,
    digest: MANIFEST_DIGEST,
  });
  const recorded = JSON.parse(await readFile(h.record, 'utf8')) as {
    argv: string[];
    env: Record<string, string>;
  };
  t.is(recorded.argv[0], 'build');
  t.is(recorded.argv[recorded.argv.indexOf('--image-name') + 1], result.image);
  t.true(recorded.argv.includes(`org.opencontainers.image.revision=${h.commit}`));
  // What retention reads back: the branch, and no tag named by the request.
  t.true(recorded.argv.includes('image-build-service.branch=main'), recorded.argv.join(' '));
  t.true(recorded.argv.includes('image-build-service.tag='));
  // The child's environment: the allowlist plus the build's own variables, nothing inherited.
  t.deepEqual(Object.keys(recorded.env).sort(), [
    'DOCKER_CONFIG',
    'FAKE_MODE',
    'FAKE_RECORD',
    'HOME',
    'IBS_LABEL_BRANCH',
    'IBS_LABEL_BUILD_KEY',
    'IBS_LABEL_BUILT',
    'IBS_LABEL_NAMED_TAG',
    'IBS_LABEL_REVISION',
    'IBS_LABEL_SOURCE',
    'IBS_LAYER_COMPRESSION',
    'IBS_PROVENANCE',
    'PATH',
    'TMPDIR',
    'XDG_CACHE_HOME',
    'XDG_CONFIG_HOME',
  ]);
  const cloneLog = await text(h, result.gitCloneLogId);
  t.regex(cloneLog, /\$ git clone/);
  // A log is for people: `git ls-tree -z` entries each on a line of their own, no NUL byte.
  t.false(cloneLog.includes('\0'), 'no NUL in the clone log');
  t.regex(cloneLog, /^100644 blob [0-9a-f]{40}\t\.devcontainer\/devcontainer\.json$/m);
  // git's report on the branch's upstream, which the service removes (`upstream is gone`), is noise.
  t.regex(cloneLog, /^\$ git .* checkout/m);
  t.false(cloneLog.includes('Your branch'), cloneLog);
  t.regex(await text(h, result.imageBuildLogId), /fake devcontainer build output/);
  // Progress as it happened: each log id as soon as its log exists, the commit once cloned. The
  // img log opens while resolving (the build key and reuse decision are written there).
  t.deepEqual(reporter.calls, [
    `git log ${result.gitCloneLogId}`,
    `resolved main ${h.commit} ${result.image}`,
    'phase resolving',
    `img log ${result.imageBuildLogId}`,
    'phase building',
  ]);
  t.deepEqual(await readdir(join(h.scratchDir, 'requests')), []);
  t.is(h.deps.groups.size, 0);
});

test('a failing CLI is a 500 naming the command and its exit code, with the img log id', async (t) => {
  const h = await harness(t, 'fail');
  const err = await t.throwsAsync(runJob(plan(h), h.deps, new AbortController().signal, recordingReporter()));
  t.true(isServiceError(err));
  if (!isServiceError(err)) return;
  t.is(err.code, 'COMMAND_FAILED');
  t.regex(err.message, /^devcontainer build .* exited with code 3$/);
  t.regex(await text(h, err.details.logId ?? ''), /fake failure/);
  t.deepEqual(await readdir(join(h.scratchDir, 'requests')), []);
});

test('the job deadline kills a hanging CLI: the job fails, its slot is free, nothing is left', async (t) => {
  const h = await harness(t, 'hang');
  const queue = createBuildQueue({ maxConcurrent: 1, shutdownSignal: new AbortController().signal });
  const started = Date.now();
  const err = await t.throwsAsync(
    queue.run((signal) => runJob(plan(h), h.deps, signal, recordingReporter()), {
      deadlineSeconds: 6,
    }),
  );
  t.true(isServiceError(err));
  if (!isServiceError(err)) return;
  // Normally the CLI hangs when the deadline comes; on a loaded machine it may still be the clone.
  t.regex(err.message, /^(devcontainer build|git) .* was killed at the job deadline \(6 s/);
  t.regex(await text(h, err.details.logId ?? ''), /# was killed at the job deadline/);
  t.true(Date.now() - started < 60_000); // the CLI would hang forever
  t.is(queue.inFlight, 0);
  t.is(h.deps.groups.size, 0);
  t.deepEqual(await readdir(join(h.scratchDir, 'requests')), []);
});
