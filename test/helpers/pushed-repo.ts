/**
 * A repository the test pushes to while it runs: a bare repository under the stack's repos dir
 * (served by its git servers, partial clones allowed as the fixtures), fed by real `git push`es
 * from a working tree of its own. The reuse, retention and prebuild tests all make theirs here.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, rmdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { stack } from './build-support.js';

/** The `before` of a branch's first push (as forges send it). */
export const ZERO = '0'.repeat(40);

const gitEnv = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'IBS Test',
  GIT_AUTHOR_EMAIL: 'test@ibs.invalid',
  GIT_COMMITTER_NAME: 'IBS Test',
  GIT_COMMITTER_EMAIL: 'test@ibs.invalid',
};

export interface PushedRepo {
  readonly name: string;
  /** The https URL the service clones (and a forge's `clone_url`). */
  readonly url: string;
  /**
   * Writes (content) or deletes (null) files, commits on `branch` and pushes it: the branch's old
   * head (ZERO for its first push) and new one. A new branch starts from main (the first branch
   * pushed starts the repository).
   */
  push(
    branch: string,
    files: Record<string, string | null>,
    message?: string,
  ): Promise<{ before: string; after: string }>;
  dispose(): Promise<void>;
}

async function writeFiles(tree: string, files: Record<string, string | null>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    const file = join(tree, path);
    if (content === null) await rm(file, { force: true });
    else {
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, content);
    }
  }
}

/** A repository named after `label`; with `owner`, under that owner's path (`<owner>/<name>`: its tenant). */
export async function pushedRepo(label: string, options: { owner?: string } = {}): Promise<PushedRepo> {
  const repoName = `it-${label}-${randomBytes(4).toString('hex')}`;
  const name = options.owner === undefined ? repoName : `${options.owner}/${repoName}`;
  const bare = join(stack.GIT_REPOS_DIR, `${name}.git`);
  const ownerDir = options.owner === undefined ? undefined : join(stack.GIT_REPOS_DIR, options.owner);
  const work = await mkdtemp(join(tmpdir(), `ibs-${label}-`));
  const home = join(work, '.home');
  const tree = join(work, 'tree');
  await mkdir(home);
  const env = { ...gitEnv, HOME: home };
  const git = async (...args: string[]) => (await execa('git', ['-C', tree, ...args], { env })).stdout.trim();
  if (ownerDir !== undefined) await mkdir(ownerDir, { recursive: true });
  await execa('git', ['init', '-q', '--bare', '-b', 'main', bare], { env });
  await execa('git', ['-C', bare, 'config', 'uploadpack.allowFilter', 'true'], { env });
  await execa('git', ['init', '-q', '-b', 'main', tree], { env });
  const heads = new Map<string, string>();
  let current = 'main';
  return {
    name,
    url: `${stack.GIT_HTTPS_URL}/${name}.git`,
    push: async (branch, files, message) => {
      const before = heads.get(branch) ?? ZERO;
      if (branch !== current) {
        const from = heads.has('main') ? ['main'] : [];
        await git('checkout', '-q', ...(heads.has(branch) ? [branch] : ['-b', branch, ...from]));
        current = branch;
      }
      await writeFiles(tree, files);
      await git('add', '-A');
      await git('commit', '-q', '--allow-empty', '-m', message ?? `change ${heads.size} on ${branch}`);
      await git('push', '-q', bare, branch);
      const after = await git('rev-parse', 'HEAD');
      heads.set(branch, after);
      return { before, after };
    },
    dispose: async () => {
      await rm(work, { recursive: true, force: true });
      await rm(bare, { recursive: true, force: true });
      // The owner's directory goes with its last repository.
      if (ownerDir !== undefined) await rmdir(ownerDir).catch(() => undefined);
    },
  };
}
