// No file of the repository carries a merge's conflict markers (a merge committed half-resolved
// once left them in ARCHITECTURE.md). Every tracked text file is read, as git lists it.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const MARKER = /^(?:<{7} |>{7} |={7}$)/m;

export function filesWithMarkers(files: readonly string[], read: (file: string) => string): string[] {
  return files.filter((file) => MARKER.test(read(file)));
}

test('the marker rule finds each kind of conflict line and leaves other text alone', (t) => {
  const texts: Record<string, string> = {
    'ours.md': 'a\n<<<<<<< HEAD\nb\n',
    'theirs.md': 'a\n>>>>>>> branch\n',
    'middle.md': 'a\n=======\nb\n',
    'clean.md': 'a heading\n=========\n<<< not a marker\n',
  };
  t.deepEqual(
    filesWithMarkers(Object.keys(texts), (f) => texts[f] ?? ''),
    ['ours.md', 'theirs.md', 'middle.md'],
  );
});

test('no tracked file holds conflict markers', (t) => {
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter((f) => f !== '' && !/\.(?:png|jpg|gz|tgz|ico)$/.test(f));
  const read = (file: string): string => {
    try {
      return readFileSync(join(ROOT, file), 'utf8');
    } catch {
      return '';
    }
  };
  t.deepEqual(filesWithMarkers(files, read), []);
});
