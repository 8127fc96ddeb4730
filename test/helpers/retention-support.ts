/**
 * Helpers of the retention tests: a repository with commits on several branches (a bare repository
 * under the stack's repos dir, served by its git servers), a definition that builds and keys, and
 * registry read-backs: tags, manifests, everything a tag reaches.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { MANIFEST_ACCEPT, registryFetch } from '../stack/registry-client.js';
import { stack } from './build-support.js';

const gitEnv = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'IBS Test',
  GIT_AUTHOR_EMAIL: 'test@ibs.invalid',
  GIT_COMMITTER_NAME: 'IBS Test',
  GIT_COMMITTER_EMAIL: 'test@ibs.invalid',
};

export interface BranchRepo {
  readonly url: string;
  /** Writes `files`, commits on `branch` (created from main when new), pushes; the commit id. */
  commit(branch: string, files: Record<string, string>): Promise<string>;
  dispose(): Promise<void>;
}

export async function branchRepo(label: string): Promise<BranchRepo> {
  const name = `it-${label}-${randomBytes(4).toString('hex')}`;
  const bare = join(stack.GIT_REPOS_DIR, `${name}.git`);
  const work = await mkdtemp(join(tmpdir(), `ibs-${label}-`));
  const env = { ...gitEnv, HOME: work };
  const tree = join(work, 'tree');
  const git = async (...args: string[]) => (await execa('git', ['-C', tree, ...args], { env })).stdout.trim();
  await execa('git', ['init', '-q', '--bare', '-b', 'main', bare], { env });
  await execa('git', ['-C', bare, 'config', 'uploadpack.allowFilter', 'true'], { env });
  await execa('git', ['init', '-q', '-b', 'main', tree], { env });
  const branches = new Set<string>();
  return {
    url: `${stack.GIT_HTTPS_URL}/${name}.git`,
    commit: async (branch, files) => {
      if (branches.size > 0) {
        await git('checkout', '-q', ...(branches.has(branch) ? [branch] : ['-b', branch, 'main']));
      }
      branches.add(branch);
      for (const [path, content] of Object.entries(files)) {
        await mkdir(dirname(join(tree, path)), { recursive: true });
        await writeFile(join(tree, path), content);
      }
      await git('add', '-A');
      await git('commit', '-q', '--allow-empty', '-m', `change on ${branch}`);
      await git('push', '-q', bare, branch);
      return git('rev-parse', 'HEAD');
    },
    dispose: async () => {
      await rm(work, { recursive: true, force: true });
      await rm(bare, { recursive: true, force: true });
    },
  };
}

const json = (v: unknown): string => `${JSON.stringify(v, null, 2)}\n`;

/** A definition with a local feature (so the build runs the CLI and BuildKit), keyed by its files. */
export const keyedDefinition = (): Record<string, string> => ({
  '.devcontainer/devcontainer.json': json({ image: stack.BASE_IMAGE_ANON, features: { './hello': {} } }),
  '.devcontainer/hello/devcontainer-feature.json': json({ id: 'hello', version: '1.0.0', name: 'hello' }),
  '.devcontainer/hello/install.sh': '#!/bin/sh\nset -e\necho hello > /etc/hello-retention\n',
});

/** Every tag of `<registry>/<name>` (sorted; [] when the repository is unknown). */
export async function registryTags(registry: string, name: string): Promise<string[]> {
  const res = await registryFetch(registry, `/v2/${name}/tags/list?n=10000`);
  if (res.status === 404) return [];
  const body = (await res.json()) as { tags?: string[] | null };
  return [...(body.tags ?? [])].sort();
}

/** The status of a manifest (by tag or digest) and, when there, its digest and JSON. */
export async function manifestOf(
  registry: string,
  name: string,
  reference: string,
): Promise<{ status: number; digest?: string; json?: Record<string, unknown> }> {
  const res = await registryFetch(registry, `/v2/${name}/manifests/${reference}`, {
    headers: { accept: MANIFEST_ACCEPT },
  });
  if (res.status !== 200) return { status: res.status };
  const json = (await res.json()) as Record<string, unknown>;
  return { status: 200, digest: res.headers.get('docker-content-digest') ?? '', json };
}

/** Every tag with the digest it names (what a plan must leave as it was). */
export async function tagDigests(registry: string, name: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const tag of await registryTags(registry, name)) {
    out[tag] = (await manifestOf(registry, name, tag)).digest ?? 'absent';
  }
  return out;
}

type Descriptor = { digest: string };

/**
 * Every manifest and blob `tag` reaches (index, platform and attestation manifests, configs,
 * layers), each with the status the registry answers for it.
 */
export async function reachable(registry: string, name: string, tag: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const visit = async (reference: string): Promise<void> => {
    const m = await manifestOf(registry, name, reference);
    out.set(`manifest ${reference}`, m.status);
    if (m.json === undefined) return;
    const children = (m.json.manifests as Descriptor[] | undefined) ?? [];
    for (const child of children) await visit(child.digest);
    const blobs = [
      m.json.config as Descriptor | undefined,
      ...((m.json.layers as Descriptor[] | undefined) ?? []),
    ];
    for (const blob of blobs.filter((b): b is Descriptor => b !== undefined)) {
      const res = await registryFetch(registry, `/v2/${name}/blobs/${blob.digest}`, { method: 'HEAD' });
      out.set(`blob ${blob.digest}`, res.status);
    }
  };
  await visit(tag);
  return out;
}
