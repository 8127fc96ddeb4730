/**
 * Shared pieces of the POST /build integration tests: the service started against the real
 * stack, a POST /build over HTTP, and a reader of the pushed image over the registry API.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync, type Dirent } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startApp, type ConfigOverrides, type RunningApp } from './app.js';
import { privateBuilderBridge, type PrivateBridge } from '../stack/builders.js';
import { stackEnv, type StackEnv } from '../stack/env.js';
import { MANIFEST_ACCEPT, registryFetch, type RegistryCreds } from '../stack/registry-client.js';

export const stack: StackEnv = stackEnv();

export const allRegistries = (): string[] => [
  stack.REGISTRY_ANON,
  stack.REGISTRY_NODELETE,
  stack.REGISTRY_BASIC,
  stack.REGISTRY_TOKEN,
];

export type BuildOverrides = ConfigOverrides;

/** The service with the stack's builder, its registries as insecure, its git CA trusted; build reuse off unless asked. */
export async function startBuildApp(
  overrides: BuildOverrides = {},
  options: Parameters<typeof startApp>[1] = {},
): Promise<RunningApp> {
  const { build, ...rest } = overrides;
  return startApp(
    {
      builderEndpoints: [stack.STACK_BUILDER_ENDPOINT],
      insecureRegistries: allRegistries(),
      logs: { retention: 100 },
      childEnv: {
        PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
        GIT_SSL_CAINFO: stack.GIT_CA_FILE,
      },
      ...rest,
      build: {
        platforms: [],
        noCache: false,
        mode: 'auto',
        cloneTimeoutSeconds: 120,
        timeoutSeconds: 600,
        maxConcurrent: 0,
        maxPerBuilder: 0,
        maxQueued: 200,
        quotas: [],
        nativePlatformsOnly: false,
        // The build tests exercise building (and re-run against registries that keep earlier keys);
        // the reuse tests (build-reuse.test.ts) turn it on.
        reuse: false,
        provenance: 'min',
        sbom: false,
        ...build,
      },
    },
    options,
  );
}

/** The service's builderTls for the stack's builders (mutual TLS with the stack's client certificate). */
export const STACK_BUILDER_TLS = {
  caPath: stack.BUILDER_TLS_CA_FILE,
  certPath: stack.BUILDER_TLS_CLIENT_CERT_FILE,
  keyPath: stack.BUILDER_TLS_CLIENT_KEY_FILE,
  serverName: stack.STACK_BUILDER_TLS_SERVER_NAME,
};

/** A private bridge to each of the stack's two builders (a, b) for one test: a test may stop them. */
export async function privateBridges(t: {
  teardown: (fn: () => Promise<void>) => void;
}): Promise<[PrivateBridge, PrivateBridge]> {
  const a = await privateBuilderBridge('a');
  t.teardown(() => a.stop());
  const b = await privateBuilderBridge('b');
  t.teardown(() => b.stop());
  return [a, b];
}

/** startBuildApp for one test: closed when the test ends, and its scratch dir removed with it. */
export async function startBuildAppFor(
  t: { teardown: (fn: () => Promise<void>) => void },
  overrides: BuildOverrides = {},
): Promise<RunningApp> {
  const app = await startBuildApp(overrides);
  t.teardown(() => app.close());
  return app;
}

export interface BuildResponse {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

export async function postBuild(app: RunningApp, body: unknown): Promise<BuildResponse> {
  const res = await fetch(`${app.url}/build`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

export async function fetchLog(app: RunningApp, id: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(`${app.url}/logs/${String(id)}`);
  return { status: res.status, text: await res.text() };
}

/** A unique image name for one test. */
export const uniqueName = (label: string): string => `it/${label}-${randomBytes(4).toString('hex')}`;

export const httpsRepo = (name: string): string => `${stack.GIT_HTTPS_URL}/${name}.git`;
export const sshRepo = (name: string): string => `${stack.GIT_SSH_URL}/${name}.git`;
export const httpsCreds = () => ({ username: stack.GIT_HTTPS_USER, token: stack.GIT_HTTPS_PASSWORD });

/** The commit a ref of a fixture repository points at, read from the bare repository itself. */
export function fixtureCommit(repo: string, ref: string): string {
  return execFileSync(
    'git',
    ['-C', join(stack.GIT_REPOS_DIR, `${repo}.git`), 'rev-parse', `${ref}^{commit}`],
    {
      encoding: 'utf8',
    },
  ).trim();
}

export interface PushedImage {
  /** Platforms of the index (attestations left out), or of the single manifest. */
  platforms: string[];
  /** Labels of the linux/amd64 image config. */
  labels: Record<string, string>;
  /** Layer digests of the linux/amd64 image manifest. */
  layers: string[];
  /** The digest the registry serves for the tag (index or manifest). */
  digest: string;
}

async function getJson(host: string, path: string, creds?: RegistryCreds): Promise<Record<string, unknown>> {
  const res = await registryFetch(host, path, {
    headers: { accept: MANIFEST_ACCEPT },
    ...(creds ? { creds } : {}),
  });
  if (res.status !== 200) throw new Error(`GET ${host}${path} answered ${res.status}`);
  return (await res.json()) as Record<string, unknown>;
}

/** Reads `<registry>/<name>:<tag>` over the registry API: its platforms and its config labels. */
export async function readPushedImage(
  registry: string,
  name: string,
  tag: string,
  creds?: RegistryCreds,
): Promise<PushedImage> {
  const head = await registryFetch(registry, `/v2/${name}/manifests/${tag}`, {
    method: 'HEAD',
    headers: { accept: MANIFEST_ACCEPT },
    ...(creds ? { creds } : {}),
  });
  const digest = head.headers.get('docker-content-digest') ?? '';
  let manifest = await getJson(registry, `/v2/${name}/manifests/${tag}`, creds);
  let platforms: string[] = [];
  const entries = manifest.manifests as
    { digest: string; platform?: { os: string; architecture: string; variant?: string } }[] | undefined;
  if (entries) {
    const images = entries.filter((m) => m.platform && m.platform.os !== 'unknown');
    platforms = images.map((m) => `${m.platform?.os}/${m.platform?.architecture}`);
    const amd64 = images.find((m) => m.platform?.architecture === 'amd64') ?? images[0];
    if (!amd64) throw new Error('index without an image manifest');
    manifest = await getJson(registry, `/v2/${name}/manifests/${amd64.digest}`, creds);
  }
  const configDigest = (manifest.config as { digest: string }).digest;
  const res = await registryFetch(registry, `/v2/${name}/blobs/${configDigest}`, creds ? { creds } : {});
  const config = (await res.json()) as {
    config?: { Labels?: Record<string, string> };
    os?: string;
    architecture?: string;
  };
  if (platforms.length === 0) platforms = [`${config.os}/${config.architecture}`];
  const layers = ((manifest.layers as { digest: string }[] | undefined) ?? []).map((l) => l.digest);
  return { platforms, labels: config.config?.Labels ?? {}, layers, digest };
}

/** Every regular file under `dir` (symbolic links are not followed). */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

/**
 * A repository served by the stack's git servers (with partial clones allowed, as the fixtures),
 * made for one test by `files` writing into its working tree, removed afterwards. `name` may hold
 * folders (`team-a/app`): the repository's URL path.
 */
export function servedRepo(
  files: (dir: string) => void,
  name = uniqueName('escape').replace('/', '-'),
): { name: string; remove: () => void } {
  const work = mkdtempSync(join(tmpdir(), 'ibs-escape-'));
  const bare = join(stack.GIT_REPOS_DIR, `${name}.git`);
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: work,
      env: {
        PATH: process.env.PATH,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@t',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@t',
      },
    });
  git('init', '-q', '-b', 'main');
  files(work);
  git('add', '-A');
  git('commit', '-q', '-m', 'escape');
  mkdirSync(dirname(bare), { recursive: true });
  execFileSync('git', ['clone', '-q', '--bare', work, bare]);
  execFileSync('git', ['-C', bare, 'config', 'uploadpack.allowFilter', 'true']);
  rmSync(work, { recursive: true, force: true });
  return { name, remove: () => rmSync(bare, { recursive: true, force: true }) };
}

/**
 * A served repository of its own holding a Dockerfile-based definition, for a test whose build
 * step must run by itself (SLOW_FIXTURE_DOCKERFILE / SECRETS_FIXTURE_DOCKERFILE with a nonce);
 * `name` (an `owner/app` path) where the test's rules name it, else a unique one.
 */
export function ownDockerfileRepo(
  dockerfile: string,
  name?: string,
): {
  name: string;
  repository: string;
  remove: () => void;
} {
  const repo = servedRepo((dir) => {
    mkdirSync(join(dir, '.devcontainer'));
    writeFileSync(
      join(dir, '.devcontainer', 'devcontainer.json'),
      JSON.stringify({ build: { dockerfile: 'Dockerfile' } }),
    );
    writeFileSync(join(dir, '.devcontainer', 'Dockerfile'), dockerfile);
  }, name);
  return { name: repo.name, repository: httpsRepo(repo.name), remove: repo.remove };
}
