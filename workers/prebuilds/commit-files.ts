/**
 * The files of one commit, read on demand: a shallow, blob-less fetch of the commit into a bare
 * repository of a request directory of its own, each file's blob fetched when read. For the
 * refresh, which reads only the definition and its Dockerfile. Closed (removed) by the caller.
 */
import type { StepDeps } from '../common/step-deps.js';
import { openBareRepository } from '../git/bare-repository.js';
import type { BuildPlan } from '../plan/plan-types.js';

export interface CommitFiles {
  /** The file's bytes at the commit; undefined when it has none there. */
  read(path: string): Promise<Buffer | undefined>;
  close(): Promise<void>;
}

export async function openCommitFiles(
  plan: BuildPlan,
  deps: Pick<StepDeps, 'config' | 'groups'>,
  commit: string,
  signal: AbortSignal,
): Promise<CommitFiles> {
  const repository = await openBareRepository(plan, deps, signal);
  try {
    await repository.git(['remote', 'add', 'origin', plan.url.cloneUrl]);
    await repository.git(['fetch', '-q', '--no-tags', '--depth=1', '--filter=blob:none', 'origin', commit]);
  } catch (err) {
    await repository.close();
    throw err;
  }
  return {
    read: async (path) => {
      try {
        const shown = await repository.git(['cat-file', 'blob', `${commit}:${path}`], 'stdout');
        return Buffer.from(shown.stdout, 'utf8');
      } catch {
        return undefined;
      }
    },
    close: () => repository.close(),
  };
}
