/**
 * The git object ids of the read set's paths at the clone's HEAD (tree or blob ids, as git
 * stores them: never a hash of files computed here). `''` is the root tree. A path the commit
 * does not have gets `missing`. Two commands at most, through the one subprocess wrapper.
 */
import { run, type RunOptions } from '../../src/exec/run.js';
import type { ReadPath } from '../builder/read-set.js';
import type { KeyedPath } from './build-key.js';

const MISSING = 'missing';

/** `<mode> <type> <id>\t<path>` records of `git ls-tree -z` (pure). */
function parseLsTree(output: string): Map<string, string> {
  const ids = new Map<string, string>();
  for (const record of output.split('\0')) {
    const tab = record.indexOf('\t');
    if (tab < 0) continue;
    const id = record.slice(0, tab).split(' ')[2];
    if (id !== undefined) ids.set(record.slice(tab + 1), id);
  }
  return ids;
}

export async function readObjectIds(
  cloneDir: string,
  paths: readonly ReadPath[],
  options: Pick<RunOptions, 'baseEnv' | 'log' | 'signal'>,
): Promise<KeyedPath[]> {
  const git = (args: string[]) =>
    run('git', ['-C', cloneDir, ...args], { ...options, captureStdout: true, timeoutSeconds: 60 });
  const named = paths.filter((p) => p.path !== '');
  const out: KeyedPath[] = [];
  if (paths.some((p) => p.path === '')) {
    const root = await git(['rev-parse', '--verify', 'HEAD^{tree}']);
    out.push({ path: '', kind: 'dir', objectId: root.stdout.trim() });
  }
  if (named.length > 0) {
    const listed = await git([
      'ls-tree',
      '-z',
      '--full-tree',
      'HEAD',
      '--',
      ...named.map((p) => `:(literal)${p.path}`),
    ]);
    const ids = parseLsTree(listed.stdout);
    for (const p of named) out.push({ path: p.path, kind: p.kind, objectId: ids.get(p.path) ?? MISSING });
  }
  return out;
}
