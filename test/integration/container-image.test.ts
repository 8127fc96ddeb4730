/**
 * The real container image, built from the repository's Dockerfile and run the way the chart runs
 * it: read-only root filesystem, uid/gid 2000, tmpfs /tmp, a volume for the builder state with the
 * ambient registry auth mounted as config.json. No Docker Hub: the Node.js base is made locally
 * (debootstrap bookworm + this machine's node, git, ssh, docker CLI, buildx, tini; see
 * test/helpers/container-base.sh), imported into the stack's engine, and the image is built by the
 * stack's builder. Then /health/startup, /config and one real POST /build of a fixture repository
 * pushed to the stack's Basic-auth registry through the stack's builder; `ibs` (the CI client) on
 * the image's PATH checks it.
 */
import test from 'ava';
import { execa } from 'execa';
import { createHash, randomBytes } from 'node:crypto';
import { chmod, chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stackEnv } from '../stack/env.js';
import { freePort } from '../stack/proc.js';
import { eventually } from '../helpers/eventually.js';

const ROOT = join(import.meta.dirname, '..', '..');
const BASE_SCRIPT = join(ROOT, 'test', 'helpers', 'container-base.sh');
const IMAGE = 'ibs-local/image-build-service:test';
const STATE_DIR_IN_IMAGE = '/var/lib/builder-state';

const stack = stackEnv();
/** docker CLI against the stack's engine, with the stack's remote builder configured. */
const dockerEnv = {
  ...process.env,
  DOCKER_HOST: stack.STACK_DOCKER_HOST,
  DOCKER_CONFIG: stack.STACK_DOCKER_CONFIG,
};
const docker = (args: string[], options: { timeoutMs?: number } = {}) =>
  execa('docker', args, { env: dockerEnv, timeout: options.timeoutMs ?? 120_000, all: true });

// Progress goes to stderr as it happens (ava's t.log is shown only when the test ends, and the
// phases take minutes): one line when a phase starts, one when it ends, with its time.
const testStarted = performance.now();
const timings: Record<string, number> = {};
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)}s`;
function progress(line: string): void {
  process.stderr.write(`[container-image +${seconds(performance.now() - testStarted)}] ${line}\n`);
}
async function timed<T>(what: string, fn: () => Promise<T>): Promise<T> {
  const started = performance.now();
  progress(`${what} ...`);
  let outcome = 'failed';
  try {
    const result = await fn();
    outcome = 'done';
    return result;
  } finally {
    const ms = performance.now() - started;
    timings[what] = Math.round(ms) / 1000;
    progress(`${what}: ${outcome} in ${seconds(ms)}`);
  }
}

/** The local base image, tagged by what it is made of so CI imports it once per change. */
async function ensureBaseImage(): Promise<string> {
  const { stdout: dockerVersion } = await execa('docker', ['--version']);
  const key = createHash('sha256')
    .update(await readFile(BASE_SCRIPT))
    .update(process.version)
    .update(dockerVersion)
    .digest('hex')
    .slice(0, 12);
  const tag = `ibs-local/node-base:${key}`;
  const present = await docker(['image', 'inspect', tag]).then(
    () => true,
    () => false,
  );
  if (present) {
    progress(`local base image ${tag} already imported`);
    return tag;
  }
  const scratch = await mkdtemp(join(tmpdir(), 'ibs-base-'));
  try {
    const tar = join(scratch, 'rootfs.tar');
    await timed('base rootfs (debootstrap, cached in /var/cache/ibs-container-base)', () =>
      execa('bash', [BASE_SCRIPT, tar], { timeout: 540_000 }),
    );
    await timed('base image import', () =>
      docker(
        [
          'import',
          '--change',
          'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
          tar,
          tag,
        ],
        {
          timeoutMs: 300_000,
        },
      ),
    );
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return tag;
}

async function buildImage(base: string): Promise<void> {
  // RUN steps need the npm registry (npm ci): the build network is the host's.
  await timed('image build (Dockerfile, npm ci inside, stack builder)', () =>
    docker(
      [
        'buildx',
        'build',
        '--builder',
        stack.STACK_BUILDER_NAME,
        '--network',
        'host',
        '--build-arg',
        `BASE_IMAGE=${base}`,
        '--build-arg',
        `DOCKER_CLI_IMAGE=${base}`,
        '--tag',
        IMAGE,
        '--load',
        ROOT,
      ],
      { timeoutMs: 540_000 },
    ),
  );
}

/** The first answer of `url` (refused while the container starts). */
async function waitForHttp(url: string, timeoutMs: number): Promise<Response> {
  return eventually(() => fetch(url).catch(() => undefined), {
    timeout: timeoutMs,
    interval: 200,
    what: `an answer from ${url}`,
  });
}

test('the image builds, runs read-only as uid 2000 and performs a real build', async (t) => {
  // No t.timeout: while one is in force AVA's inactivity timeout can be lost (a hang elsewhere
  // would then never end the run). Each phase has a timeout of its own, under AVA's (package.json).
  const base = await timed('local Node.js base image', ensureBaseImage);
  await buildImage(base);
  const { stdout: size } = await docker(['image', 'ls', '--format', '{{.Size}}', IMAGE]);
  const { stdout: baseSize } = await docker(['image', 'ls', '--format', '{{.Size}}', base]);
  t.log(`image size: ${size} (local base: ${baseSize})`);

  // The builder state volume (owned by 2000, like an emptyDir with fsGroup) and the ambient
  // registry auth mounted read-only as its config.json, as the chart mounts its Secret.
  const state = await mkdtemp(join(tmpdir(), 'ibs-builder-state-'));
  const auth = await mkdtemp(join(tmpdir(), 'ibs-registry-auth-'));
  await chown(state, 2000, 2000);
  const authFile = join(auth, 'config.json');
  const basic = Buffer.from(`${stack.REGISTRY_BASIC_USER}:${stack.REGISTRY_BASIC_PASSWORD}`).toString(
    'base64',
  );
  await writeFile(authFile, JSON.stringify({ auths: { [stack.REGISTRY_BASIC]: { auth: basic } } }));
  await chmod(authFile, 0o444);

  const port = await freePort();
  const name = `ibs-container-test-${randomBytes(4).toString('hex')}`;
  const registries = [
    stack.REGISTRY_ANON,
    stack.REGISTRY_NODELETE,
    stack.REGISTRY_BASIC,
    stack.REGISTRY_TOKEN,
  ];
  t.teardown(async () => {
    await docker(['rm', '--force', name]).catch(() => undefined);
    await rm(state, { recursive: true, force: true });
    await rm(auth, { recursive: true, force: true });
  });

  const started = performance.now();
  progress('container start ...');
  await docker([
    'run',
    '--detach',
    '--name',
    name,
    '--read-only',
    '--user',
    '2000:2000',
    '--tmpfs',
    '/tmp:rw,exec,nosuid,size=2g,mode=1777',
    '--volume',
    `${state}:${STATE_DIR_IN_IMAGE}`,
    '--volume',
    `${authFile}:${STATE_DIR_IN_IMAGE}/config.json:ro`,
    '--volume',
    `${stack.GIT_CA_FILE}:/etc/ibs/git-ca.pem:ro`,
    '--network',
    'host',
    '--env',
    `PORT=${port}`,
    '--env',
    `BUILDER_ENDPOINT=${stack.STACK_BUILDER_ENDPOINT}`,
    '--env',
    `INSECURE_REGISTRIES=${registries.join(',')}`,
    '--env',
    'GIT_SSL_CAINFO=/etc/ibs/git-ca.pem',
    '--env',
    'SERVICE_NAME=ibs-container-test',
    '--env',
    'DEPLOYMENT_ENVIRONMENT=ci',
    IMAGE,
  ]);
  const url = `http://127.0.0.1:${port}`;
  const logs = async () => (await docker(['logs', name]).catch((e: { all?: string }) => e)).all ?? '';

  try {
    const startup = await waitForHttp(`${url}/health/startup`, 60_000);
    timings['container start to /health/startup'] = Math.round(performance.now() - started) / 1000;
    progress(`container start: /health/startup answered in ${seconds(performance.now() - started)}`);
    t.is(startup.status, 200);
    t.deepEqual(await startup.json(), { status: 'started' });
    t.is((await fetch(`${url}/health/ready`)).status, 200);

    const config = (await (await fetch(`${url}/config`)).json()) as Record<string, unknown>;
    t.is(config.builderConfigured, true);
    t.deepEqual(config.insecureRegistries, registries);
    t.deepEqual(config.registryAuth, [{ registry: stack.REGISTRY_BASIC }]);
    t.false(JSON.stringify(config).includes(stack.REGISTRY_BASIC_PASSWORD));

    // PID 1 is tini, the service runs as 2000:2000.
    const { stdout: pid1 } = await docker(['exec', name, 'cat', '/proc/1/cmdline']);
    t.regex(pid1.replaceAll('\0', ' '), /^\/usr\/bin\/tini -- node \/app\/dist\/src\/main\.js/);
    const { stdout: ids } = await docker(['exec', name, 'sh', '-c', 'id -u; id -g']);
    t.is(ids.trim(), '2000\n2000');

    const repoName = `ci/container-image-${randomBytes(3).toString('hex')}`;
    const res = await timed('POST /build of a fixture repository in the container', () =>
      fetch(`${url}/build`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          repository: `${stack.GIT_HTTPS_URL}/image.git`,
          image: { registry: stack.REGISTRY_BASIC, name: repoName },
          gitCredentials: { username: stack.GIT_HTTPS_USER, token: stack.GIT_HTTPS_PASSWORD },
        }),
      }),
    );
    const body = (await res.json()) as Record<string, unknown>;
    if (res.status !== 200) {
      const logId = typeof body.logId === 'string' ? body.logId : '';
      const log = logId ? await (await fetch(`${url}/logs/${logId}`)).text() : '';
      t.log(JSON.stringify(body), log, await logs());
    }
    t.is(res.status, 200);
    t.is(body.registry, stack.REGISTRY_BASIC);
    t.is(body.name, repoName);
    t.regex(String(body.commit), /^[0-9a-f]{40}$/);

    // The pushed image is in the registry (read through the running container, ambient auth).
    const query = new URLSearchParams({
      registry: stack.REGISTRY_BASIC,
      name: repoName,
      tag: String(body.tag),
    });
    progress('checks: GET /image, root filesystem unchanged, builder state');
    const check = await fetch(`${url}/image?${query}`);
    t.deepEqual(await check.json(), { image: body.image, exists: true });

    // ibs, the CI client, is on the image's PATH and talks to the service (docs/ci.md).
    const help = await docker(['exec', name, 'ibs', '--help']);
    t.regex(help.stdout, /^image-build-service \S+\nibs: /);
    const exists = await docker([
      'exec',
      '--env',
      `IBS_SERVER=${url}`,
      name,
      'ibs',
      'image',
      'exists',
      '--registry',
      stack.REGISTRY_BASIC,
      '--name',
      repoName,
      '--tag',
      String(body.tag),
    ]);
    t.is(exists.stdout.trim(), 'exists');

    // Nothing was written outside /tmp and the builder state volume: the root filesystem is
    // unchanged (the only entries are the mount point the engine made for the CA file).
    const { stdout: diff } = await docker(['diff', name]);
    const changes = diff
      .split('\n')
      .filter(Boolean)
      .filter((line) => !['C /etc', 'A /etc/ibs', 'A /etc/ibs/git-ca.pem'].includes(line));
    t.deepEqual(changes, []);
    const { stdout: stateFiles } = await docker(['exec', name, 'ls', '-A', STATE_DIR_IN_IMAGE]);
    t.true(stateFiles.split('\n').includes('buildx'), stateFiles);
  } catch (err) {
    t.log(await logs());
    throw err;
  } finally {
    progress(`finished; timings (s): ${JSON.stringify(timings)}`);
  }
});
