// The unit tests mirror the source tree (README.md, Development): a test under test/unit/src or
// test/unit/workers sits in the folder of the code it tests, so each such folder must exist there.
import test from 'ava';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const UNIT = join(ROOT, 'test', 'unit');
const MIRRORED = ['src', 'workers'];

/** The folders (relative to test/unit) of the mirrored tests that have no source folder of that path. */
export function strayFolders(
  testFiles: readonly string[],
  isSourceFolder: (folder: string) => boolean,
): string[] {
  const folders = testFiles
    .filter((file) => file.endsWith('.test.ts') && MIRRORED.includes(file.split('/')[0] ?? ''))
    .map((file) => dirname(file));
  return [...new Set(folders)].filter((folder) => !isSourceFolder(folder)).sort();
}

/** Every file under test/unit/src and test/unit/workers, relative to test/unit, with `/`. */
function mirroredTestFiles(): string[] {
  return MIRRORED.filter((root) => existsSync(join(UNIT, root))).flatMap((root) =>
    readdirSync(join(UNIT, root), { recursive: true, encoding: 'utf8' })
      .map((entry) => `${root}/${entry.split('\\').join('/')}`)
      .filter((file) => statSync(join(UNIT, file)).isFile()),
  );
}

const isFolderOfRoot = (folder: string): boolean =>
  existsSync(join(ROOT, folder)) && statSync(join(ROOT, folder)).isDirectory();

test('a mirrored test in a folder the source does not have is named; other roots are free', (t) => {
  const source = new Set(['src', 'src/http', 'workers', 'workers/builder/fleet']);
  const files = [
    'src/main.test.ts',
    'src/http/openapi.test.ts',
    'workers/builder/fleet/fleet.test.ts',
    'src/chart/values-schema.test.ts',
    'workers/builder/fleet/old/probe.test.ts',
    'k8s/rendered.test.ts',
  ];
  t.deepEqual(
    strayFolders(files, (folder) => source.has(folder)),
    ['src/chart', 'workers/builder/fleet/old'],
  );
});

test('every test under test/unit/src and test/unit/workers sits in a folder the source tree has', (t) => {
  const files = mirroredTestFiles();
  t.true(files.length > 0, 'test/unit/src and test/unit/workers hold the mirrored tests');
  t.deepEqual(strayFolders(files, isFolderOfRoot), []);
});
