/**
 * Helpers of the prebuild tests: a repository served by the stack's git servers that the test
 * pushes branches to (real `git push`), webhook deliveries signed as GitHub signs them, and the
 * digest a registry serves for a tag.
 */
import { createHmac, randomBytes } from 'node:crypto';
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

export const ZERO = '0'.repeat(40);

export interface PushedRepo {
  readonly name: string;
  /** The https URL the service clones (and a forge's `clone_url`). */
  readonly url: string;
  /** Writes (content) or deletes (null) files, commits on `branch` (made from main), pushes; the new and old heads. */
  push(branch: string, files: Record<string, string | null>): Promise<{ before: string; after: string }>;
  dispose(): Promise<void>;
}

export async function pushedRepo(label: string): Promise<PushedRepo> {
  const name = `it-${label}-${randomBytes(4).toString('hex')}`;
  const bare = join(stack.GIT_REPOS_DIR, `${name}.git`);
  const work = await mkdtemp(join(tmpdir(), `ibs-${label}-`));
  const home = join(work, '.home');
  const tree = join(work, 'tree');
  await mkdir(home);
  const env = { ...gitEnv, HOME: home };
  const git = async (...args: string[]) => (await execa('git', ['-C', tree, ...args], { env })).stdout.trim();
  await execa('git', ['init', '-q', '--bare', '-b', 'main', bare], { env });
  await execa('git', ['-C', bare, 'config', 'uploadpack.allowFilter', 'true'], { env });
  await execa('git', ['init', '-q', '-b', 'main', tree], { env });
  const heads = new Map<string, string>();
  return {
    name,
    url: `${stack.GIT_HTTPS_URL}/${name}.git`,
    push: async (branch, files) => {
      const before = heads.get(branch) ?? ZERO;
      const current = await git('branch', '--show-current');
      if (current !== branch) {
        const exists = heads.has(branch) || (await git('branch', '--list', branch)) !== '';
        await git('checkout', '-q', ...(exists ? [branch] : ['-b', branch]));
      }
      for (const [path, content] of Object.entries(files)) {
        const file = join(tree, path);
        if (content === null) await rm(file, { force: true });
        else {
          await mkdir(dirname(file), { recursive: true });
          await writeFile(file, content);
        }
      }
      await git('add', '-A');
      await git('commit', '-q', '--allow-empty', '-m', `change on ${branch}`);
      await git('push', '-q', bare, branch);
      const after = await git('rev-parse', 'HEAD');
      heads.set(branch, after);
      return { before, after };
    },
    dispose: async () => {
      await rm(work, { recursive: true, force: true });
      await rm(bare, { recursive: true, force: true });
    },
  };
}

/** A GitHub push payload (the fields the service reads, plus some it must ignore). */
export function githubPush(
  repo: { url: string; name: string },
  branch: string,
  commits: { before: string; after: string },
) {
  return {
    ref: `refs/heads/${branch}`,
    before: commits.before,
    after: commits.after,
    deleted: commits.after === ZERO,
    repository: {
      full_name: `it/${repo.name}`,
      clone_url: repo.url,
      html_url: repo.url.replace(/\.git$/, ''),
    },
    commits: [{ id: commits.after, modified: ['ignored-by-the-service'] }],
  };
}

export interface HookAnswer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** POSTs `payload` to `/hooks/<forge>` with the headers given (signature computed with `secret` for GitHub). */
export async function sendHook(
  url: string,
  forge: 'github' | 'gitlab' | 'gitea',
  payload: unknown,
  headers: Record<string, string>,
): Promise<HookAnswer> {
  const res = await fetch(`${url}/hooks/${forge}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(payload),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

export const githubSignature = (secret: string, payload: unknown): string =>
  `sha256=${createHmac('sha256', secret).update(JSON.stringify(payload)).digest('hex')}`;

/** A GitHub push delivery signed with `secret`. */
export const githubHook = (url: string, secret: string, payload: unknown): Promise<HookAnswer> =>
  sendHook(url, 'github', payload, {
    'x-github-event': 'push',
    'x-github-delivery': randomBytes(8).toString('hex'),
    'x-hub-signature-256': githubSignature(secret, payload),
  });

/** The digest `<registry>/<name>:<tag>` serves, or undefined when the tag does not exist. */
export async function tagDigest(registry: string, name: string, tag: string): Promise<string | undefined> {
  const res = await registryFetch(registry, `/v2/${name}/manifests/${tag}`, {
    method: 'HEAD',
    headers: { accept: MANIFEST_ACCEPT },
  });
  if (res.status === 404) return undefined;
  if (res.status !== 200) throw new Error(`HEAD ${name}:${tag} answered ${res.status}`);
  return res.headers.get('docker-content-digest') ?? undefined;
}
