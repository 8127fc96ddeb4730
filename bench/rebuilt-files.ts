// What naming the files that made a build run costs (`npm run bench:rebuilt-files`; no stack:
// local repositories and git's own `upload-pack`, the server side of a smart-HTTP fetch).
// For repositories of 1,000 to 100,000 files (10 to a folder, two levels of folders), one file
// changed and one removed between two commits, in one run:
//   - the service's way (workers/git/tree-changes.ts): one v2 fetch of the old root tree less the
//     new one (`want <old>`, `have <new>`, no blob): objects and bytes sent, the server's time;
//     then the walk of only the subtrees whose ids differ (tree-diff.ts): trees read, time;
//   - against reading both trees whole: a tree-only fetch of the old commit (what a second
//     `fetchTrees` would bring) and a walk of every tree of both commits.
// Target: the service's objects, bytes and trees read stay the same whatever the repository's size.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { gitTestEnv as env } from '../test/helpers/git-test-env.js';
import { fetchBody, packOfResponse, type FetchWants } from '../workers/git/http-trees.js';
import { readPack, type PackObject } from '../workers/git/pack.js';
import { diffTrees } from '../workers/git/tree-diff.js';
import { treeEntries } from '../workers/git/tree-object.js';

const SIZES = [1_000, 10_000, 100_000];

/** `M` lines of a fast-import commit holding `files` files. */
function fileLines(files: number): string {
  const lines: string[] = [];
  for (let i = 0; i < files; i += 1) {
    const path = `d${Math.floor(i / 100)}/e${Math.floor(i / 10) % 10}/f${i}.txt`;
    const data = `${i}\n`;
    lines.push(`M 100644 inline ${path}\ndata ${Buffer.byteLength(data)}\n${data}`);
  }
  return lines.join('');
}

/** A repository with two commits (one file changed, one removed): its dir and both root trees. */
async function repository(files: number): Promise<{ dir: string; before: string; after: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'ibs-bench-rebuilt-'));
  const git = async (args: string[], input?: string) =>
    (await execa('git', ['-C', dir, ...args], { env, extendEnv: false, ...(input ? { input } : {}) })).stdout;
  await execa('git', ['init', '-q', '-b', 'main', dir], { env, extendEnv: false });
  await git(['config', 'uploadpack.allowFilter', 'true']);
  const who = 'committer t <t@example.invalid> 1700000000 +0000\n';
  const stream =
    `commit refs/heads/main\n${who}data 2\nc\n${fileLines(files)}\n` +
    `commit refs/heads/main\n${who}data 2\nc\n` +
    `M 100644 inline d0/e0/f1.txt\ndata 8\nchanged\nD d0/e0/f2.txt\n\n`;
  try {
    await git(['fast-import', '--quiet'], stream);
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    dir,
    before: (await git(['rev-parse', 'main~1^{tree}'])).trim(),
    after: (await git(['rev-parse', 'main^{tree}'])).trim(),
  };
}

/** One v2 fetch answered by git's upload-pack: the objects, the pack's bytes, the time taken. */
async function fetched(
  dir: string,
  wants: FetchWants,
): Promise<{ objects: Map<string, PackObject>; bytes: number; ms: number }> {
  const started = performance.now();
  const res = await execa('git', ['upload-pack', '--stateless-rpc', dir], {
    env: { ...env, GIT_PROTOCOL: 'version=2' },
    extendEnv: false,
    input: fetchBody(wants),
    encoding: 'buffer',
    stripFinalNewline: false,
  });
  const ms = performance.now() - started;
  const pack = packOfResponse(Buffer.from(res.stdout));
  const objects = (pack === undefined ? undefined : readPack(pack)) ?? new Map<string, PackObject>();
  return { objects, bytes: pack?.length ?? 0, ms };
}

const reader = (objects: ReadonlyMap<string, PackObject>[], asked: string[]) => (oid: string) => {
  asked.push(oid);
  for (const map of objects) {
    const object = map.get(oid);
    if (object?.type === 'tree') return treeEntries(object.data);
  }
  return undefined;
};

/** Every tree under `root` read, as a whole listing would. */
function walkAll(read: (oid: string) => ReturnType<typeof treeEntries> | undefined, root: string): void {
  for (const entry of read(root) ?? []) if (entry.type === 'tree') walkAll(read, entry.oid);
}

const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB`;

console.log('| files | way | objects sent | pack | server | trees read | walk |');
console.log('| --- | --- | --- | --- | --- | --- | --- |');
for (const files of SIZES) {
  const repo = await repository(files);
  try {
    const current = await fetched(repo.dir, { wants: [repo.after] });
    const delta = await fetched(repo.dir, { wants: [repo.before], haves: [repo.after] });
    const asked: string[] = [];
    let started = performance.now();
    const diff = diffTrees(
      reader([current.objects, delta.objects], asked),
      '',
      { oid: repo.before, type: 'tree' },
      { oid: repo.after, type: 'tree' },
    );
    const diffMs = performance.now() - started;
    const named = diff?.files.map((file) => `${file.path} ${file.change}`).join(', ');
    console.log(
      `| ${files} | service: delta fetch + diff (${named}) | ${delta.objects.size} | ${kib(delta.bytes)} | ${delta.ms.toFixed(0)} ms | ${asked.length} | ${diffMs.toFixed(1)} ms |`,
    );
    const whole = await fetched(repo.dir, { wants: [repo.before] });
    const all: string[] = [];
    started = performance.now();
    const read = reader([current.objects, whole.objects], all);
    walkAll(read, repo.before);
    walkAll(read, repo.after);
    const wholeMs = performance.now() - started;
    console.log(
      `| ${files} | both trees whole | ${whole.objects.size} | ${kib(whole.bytes)} | ${whole.ms.toFixed(0)} ms | ${all.length} | ${wholeMs.toFixed(1)} ms |`,
    );
  } finally {
    await rm(repo.dir, { recursive: true, force: true });
  }
}
