/**
 * Docs and comments speak of the product as it is: no word of how it was made (which round,
 * issue or turn of work, or which earlier main), and every path or module that README.md and
 * ARCHITECTURE.md name exists. A figure names its date and machine instead.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { comments } from '../../helpers/ts-comments.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const MAKING_OF = /\bround[ -]\d|\bissue #?\d|\bturn \d|\bthe main before\b/i;
const TRACKED = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
  cwd: ROOT,
  encoding: 'utf8',
})
  .split('\n')
  .filter((file) => file !== '' && existsSync(join(ROOT, file)));

const DOC_FILES = TRACKED.filter(
  (file) => ['README.md', 'ARCHITECTURE.md'].includes(file) || /^(docs|bench|k8s)\//.test(file),
);
const CODE_FILES = TRACKED.filter((file) => /^(src|workers|test)\/.*\.(ts|cjs|js)$/.test(file));

/** `file:line: text` of each line of `text` (which starts on line `first`) that speaks of how it was made. */
function makingOf(file: string, text: string, first = 1): string[] {
  return text
    .split('\n')
    .flatMap((line, i) => (MAKING_OF.test(line) ? [`${file}:${first + i}: ${line.trim()}`] : []));
}

test('the making-of pattern finds what it refuses and passes product words', (t) => {
  for (const bad of ['round 3', 'the round-2 figure', 'issue 21', 'Issue #4', 'turn 2', 'the main before it'])
    t.true(MAKING_OF.test(bad), bad);
  for (const good of [
    'return 1',
    'a round trip',
    'rounds 3 times',
    'issues 2 requests',
    'devcontainers/ci#434',
  ])
    t.false(MAKING_OF.test(good), good);
});

test('README, ARCHITECTURE.md, docs/, bench/ and k8s/ speak of the product only', (t) => {
  t.true(DOC_FILES.length > 20, `only ${DOC_FILES.length} files read`);
  const found = DOC_FILES.flatMap((file) => makingOf(file, readFileSync(join(ROOT, file), 'utf8')));
  t.deepEqual(found, []);
});

test('comments under src/, workers/ and test/ speak of the product only', (t) => {
  t.true(CODE_FILES.length > 100, `only ${CODE_FILES.length} files read`);
  const found = CODE_FILES.flatMap((file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const lineOf = (pos: number): number => text.slice(0, pos).split('\n').length;
    return comments(file, text).flatMap((c) => makingOf(file, text.slice(c.pos, c.end), lineOf(c.pos)));
  });
  t.deepEqual(found, []);
});

const FOLDER_PATH = /(?<![\w./-])(?:\.ci|src|workers|test|docs|bench|k8s|scripts)\/[\w./*-]*[\w*]/g;
const MODULE_NAME = /`([\w.-]+\.(?:ts|cjs|js|sh))`/g;
const NAMES = new Set(TRACKED.map((file) => basename(file)));

/** The paths and module names `text` gives that are not in the tree. */
function missingNamesIn(text: string): string[] {
  const paths = [...text.matchAll(FOLDER_PATH)].map((m) => m[0]);
  const missingPaths = paths.filter((path) => {
    if (!path.includes('*')) return !existsSync(join(ROOT, path));
    const pattern = new RegExp(`^${path.replace(/[.]/g, '\\.').replace(/\*/g, '[^/]*')}$`);
    return !TRACKED.some((file) => pattern.test(file));
  });
  const modules = [...text.matchAll(MODULE_NAME)].map((m) => m[1] ?? '');
  const missingModules = modules.filter((name) => !NAMES.has(name) && !existsSync(join(ROOT, name)));
  return [...new Set([...missingPaths, ...missingModules])];
}

const missingNames = (doc: string): string[] =>
  missingNamesIn(readFileSync(join(ROOT, doc), 'utf8')).map((name) => `${doc}: ${name}`);

test('every path and module README.md and ARCHITECTURE.md name exists', (t) => {
  t.deepEqual([...missingNames('README.md'), ...missingNames('ARCHITECTURE.md')], []);
});

test('a path that does not exist is reported', (t) => {
  const sample = 'see `src/nowhere.ts` and `nothing-here.ts`, and `bench/*.nope`';
  const paths = [...sample.matchAll(FOLDER_PATH)].map((m) => m[0]);
  t.deepEqual(paths, ['src/nowhere.ts', 'bench/*.nope']);
  const modules = [...sample.matchAll(MODULE_NAME)].map((m) => m[1]);
  t.deepEqual(modules, ['nothing-here.ts']);
  t.deepEqual(missingNamesIn(sample), ['src/nowhere.ts', 'bench/*.nope', 'nothing-here.ts']);
});
