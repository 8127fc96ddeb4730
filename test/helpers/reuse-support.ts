/**
 * Helpers of the build-reuse tests: repositories committed to on main while the test runs
 * (pushed-repo.ts), OCI features
 * published to a test namespace of the anonymous registry with the Dev Containers CLI, and
 * read-backs of pushed images over the registry API.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { devcontainerCliScript } from '../../workers/builder/devcontainer-build.js';
import { MANIFEST_ACCEPT, registryFetch, type RegistryCreds } from '../stack/registry-client.js';
import { pushedRepo } from './pushed-repo.js';

export interface TestRepo {
  /** The https URL the service clones. */
  readonly url: string;
  /** Writes (content) or deletes (null) files, commits on main, pushes; returns the commit id. */
  commit(files: Record<string, string | null>, message?: string): Promise<string>;
  dispose(): Promise<void>;
}

/** A pushed repository whose every commit is on main. */
export async function testRepo(label: string): Promise<TestRepo> {
  const repo = await pushedRepo(label);
  return {
    url: repo.url,
    commit: async (files, message) => (await repo.push('main', files, message)).after,
    dispose: repo.dispose,
  };
}

/** Publishes feature `id` at `version` to `<registry>/<namespace>/<id>` (tags 1, 1.x, 1.x.y, latest). */
export async function publishFeature(
  registry: string,
  namespace: string,
  id: string,
  version: string,
  installLine: string,
): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'ibs-feature-'));
  try {
    const src = join(dir, 'src', id);
    await mkdir(src, { recursive: true });
    await writeFile(join(src, 'devcontainer-feature.json'), JSON.stringify({ id, version, name: id }));
    await writeFile(join(src, 'install.sh'), `#!/bin/sh\nset -e\n${installLine}\n`, { mode: 0o755 });
    await mkdir(join(dir, 'home'));
    await execa(
      process.execPath,
      [
        devcontainerCliScript(),
        'features',
        'publish',
        join(dir, 'src'),
        '--registry',
        registry,
        '--namespace',
        namespace,
      ],
      {
        // TMPDIR too: the CLI keeps a cache in <TMPDIR>/devcontainercli-<user>, removed with `dir`.
        env: {
          PATH: process.env.PATH ?? '',
          HOME: join(dir, 'home'),
          DOCKER_CONFIG: join(dir, 'home'),
          TMPDIR: join(dir, 'home'),
        },
        extendEnv: false,
        timeout: 120_000,
      },
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export interface ImageView {
  /** Digest of the tag's top-level manifest. */
  digest: string;
  /** Layer digests of the linux/amd64 (or only) image. */
  layers: string[];
  labels: Record<string, string>;
}

async function getManifest(registry: string, name: string, ref: string, creds?: RegistryCreds) {
  const res = await registryFetch(registry, `/v2/${name}/manifests/${ref}`, {
    headers: { accept: MANIFEST_ACCEPT },
    ...(creds ? { creds } : {}),
  });
  if (res.status !== 200) return undefined;
  return {
    digest: res.headers.get('docker-content-digest') ?? '',
    json: (await res.json()) as Record<string, unknown>,
  };
}

/** The tag as the registry has it, or undefined when it is absent. */
export async function readImage(
  registry: string,
  name: string,
  tag: string,
  creds?: RegistryCreds,
): Promise<ImageView | undefined> {
  const top = await getManifest(registry, name, tag, creds);
  if (top === undefined) return undefined;
  let image = top.json;
  const entries = image.manifests as
    { digest: string; platform?: { os: string; architecture: string } }[] | undefined;
  if (entries) {
    const amd64 = entries.find((e) => e.platform?.architecture === 'amd64') ?? entries[0];
    image = (await getManifest(registry, name, amd64?.digest ?? '', creds))?.json ?? {};
  }
  const configDigest = (image.config as { digest: string }).digest;
  const res = await registryFetch(registry, `/v2/${name}/blobs/${configDigest}`, creds ? { creds } : {});
  const config = (await res.json()) as { config?: { Labels?: Record<string, string> } };
  return {
    digest: top.digest,
    layers: ((image.layers as { digest: string }[] | undefined) ?? []).map((l) => l.digest),
    labels: config.config?.Labels ?? {},
  };
}
