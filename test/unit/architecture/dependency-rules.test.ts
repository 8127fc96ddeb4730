/**
 * The import rules of ARCHITECTURE.md (.dependency-cruiser.cjs, run by `npm run lint`): the tree
 * passes them, and a copy of the tree with a cycle, a layer break and I/O in a pure module added on
 * purpose fails them, each under its rule.
 */
import test from 'ava';
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractDepcruiseConfig from 'dependency-cruiser/config-utl/extract-depcruise-config';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** What `depcruise src workers` finds in the tree at `root`. */
async function violations(root: string): Promise<IViolation[]> {
  const config = await extractDepcruiseConfig(join(root, '.dependency-cruiser.cjs'));
  const previous = process.cwd();
  process.chdir(root);
  try {
    const { output } = await cruise(
      ['src', 'workers'],
      { ...config.options, ruleSet: { forbidden: config.forbidden ?? [] }, validate: true },
      {},
      { tsConfig: extractTSConfig(join(root, 'tsconfig.json')) },
    );
    return (output as ICruiseResult).summary.violations;
  } finally {
    process.chdir(previous);
  }
}

const describe = (v: IViolation): string => `${v.rule.name}: ${v.from} -> ${v.to}`;

test.serial('the tree has no cycle, at file or folder level, and breaks no layer rule', async (t) => {
  const found = await violations(ROOT);
  t.deepEqual(found.map(describe), []);
});

/** Files added to a copy of the tree, each breaking one rule. */
const BREAKS: Record<string, string> = {
  // A file cycle, and a folder cycle: rules/ -> config/ -> rules/.
  'src/rules/loop-a.ts': "import { b } from './loop-b.js';\nexport const a = (): number => b() + 1;\n",
  'src/rules/loop-b.ts':
    "import { a } from './loop-a.js';\nimport type { Config } from '../config/types.js';\n" +
    'export const b = (c?: Config): number => (c === undefined ? 0 : a());\n',
  // A library below the HTTP layer importing it.
  'src/logs/uses-http.ts': "export { createApp } from '../http/app.js';\n",
  // I/O in pure modules: file I/O in the metadata merge, the exec wrapper in the build plan.
  'src/devcontainer/reads-files.ts': "export { readFile } from 'node:fs/promises';\n",
  'workers/plan/runs.ts': "export { run } from '../../src/exec/run.js';\n",
  // A step importing the worker above it.
  'workers/git/uses-worker.ts': "export type { BuildWorker } from '../build-worker.js';\n",
};

test.serial('a cycle, a layer break and I/O in a pure module added on purpose fail the check', async (t) => {
  const copy = await mkdtemp(join(tmpdir(), 'ibs-depcruise-'));
  t.teardown(() => rm(copy, { recursive: true, force: true }));
  for (const entry of ['src', 'workers', 'tsconfig.json', 'package.json', '.dependency-cruiser.cjs'])
    await cp(join(ROOT, entry), join(copy, entry), { recursive: true });
  await symlink(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
  for (const [path, text] of Object.entries(BREAKS)) {
    await mkdir(join(copy, path, '..'), { recursive: true });
    await writeFile(join(copy, path), text);
  }

  const found = (await violations(copy)).map(describe);
  const expected = [
    'no-circular: src/rules/loop-a.ts -> src/rules/loop-b.ts',
    'no-circular-folders: src/config -> src/rules',
    'layer:src/rules: src/rules/loop-b.ts -> src/config/types.ts',
    'layer:src/logs: src/logs/uses-http.ts -> src/http/app.ts',
    'pure-no-io: src/devcontainer/reads-files.ts -> fs/promises',
    'pure-no-io: workers/plan/runs.ts -> src/exec/run.ts',
    'no-import-of-root-files: workers/git/uses-worker.ts -> workers/build-worker.ts',
    'layer:workers/git: workers/git/uses-worker.ts -> workers/build-worker.ts',
  ];
  for (const line of expected) t.true(found.includes(line), `${line}\n in:\n${found.join('\n')}`);
  // Nothing else: each file break is found where it was made (the folder cycles they close aside).
  const elsewhere = found.filter(
    (line) =>
      !line.startsWith('no-circular-folders') && !Object.keys(BREAKS).some((path) => line.includes(path)),
  );
  t.deepEqual(elsewhere, []);
});
