/**
 * One word per idea and readable parameters: a build that waits on an identical build in flight
 * follows it (never coalesces, joins, claims or leads: ARCHITECTURE.md, Words), and no parameter
 * under src/ or workers/ has a one-letter name outside a tiny lambda (an arrow function whose body
 * is one expression on at most two lines, such as `(a, b) => a - b`).
 */
import test from 'ava';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { comments } from '../../helpers/ts-comments.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
/** The metric keeps its published name (docs/reuse.md, Metrics). */
const METRIC = 'service_builds_coalesced_total';
/** Other words for following, refused in the comments and identifiers of the files that follow. */
const OTHER_WORDS = /\b(?:coalesc\w*|claim\w*|leader\w*|leads?|join|joins|joined|joining)\b/i;
const FOLLOWING_FILES = [
  'workers/leases',
  'workers/reuse',
  'workers/flow',
  'workers/job',
  'workers/build-worker.ts',
  'src/builds',
  'src/redis/subscriptions.ts',
];

/** The .ts and .cjs files at `path` (a file or a folder, walked). */
function sourceFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return /\.(?:ts|cjs)$/.test(path) ? [path] : [];
  return readdirSync(path).flatMap((entry) => sourceFiles(join(path, entry)));
}

const lineOf = (source: ts.SourceFile, pos: number): number =>
  source.getLineAndCharacterOfPosition(pos).line + 1;

/** `line: name` of each one-letter parameter of `text` that is not in a tiny lambda. */
export function oneLetterParameters(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const tiny = (fn: ts.Node): boolean =>
    ts.isArrowFunction(fn) &&
    !ts.isBlock(fn.body) &&
    lineOf(source, fn.getEnd()) - lineOf(source, fn.getStart(source)) <= 1;
  const visit = (node: ts.Node): void => {
    if (
      ts.isParameter(node) &&
      ts.isIdentifier(node.name) &&
      node.name.text.length === 1 &&
      node.name.text !== '_' &&
      !tiny(node.parent)
    ) {
      found.push(`${lineOf(source, node.name.getStart(source))}: ${node.name.text}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The comments and the words of the identifiers of `text` (camelCase split; `join` of paths and arrays left out). */
export function commentsAndIdentifierWords(fileName: string, text: string): string[] {
  const words = comments(fileName, text).map((range) => text.slice(range.pos, range.end));
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const visit = (node: ts.Node): void => {
    if ((ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) && node.text !== 'join') {
      words.push(
        node.text
          .replace(/^#/, '')
          .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
          .replace(/_/g, ' '),
      );
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return words;
}

const read = (file: string): string => readFileSync(file, 'utf8');
const name = (file: string): string => relative(ROOT, file);

test('the parameter rule finds one-letter parameters outside tiny lambdas', (t) => {
  t.deepEqual(oneLetterParameters('a.ts', 'export function f(c: number): number {\n  return c;\n}\n'), [
    '1: c',
  ]);
  t.deepEqual(oneLetterParameters('a.ts', 'export type F = (a: string) => void;\n'), ['1: a']);
  t.deepEqual(oneLetterParameters('a.ts', 'export const g = [1].map((x) => {\n  return x;\n});\n'), ['1: x']);
  t.deepEqual(oneLetterParameters('a.ts', 'export const h = [1].map((x) => ({\n  a: x,\n  b: x,\n}));\n'), [
    '1: x',
  ]);
  t.deepEqual(oneLetterParameters('a.ts', 'export const by = (a: number, b: number) => a - b;\n'), []);
  t.deepEqual(oneLetterParameters('a.ts', 'export const is = (v: unknown): boolean =>\n  v === 1;\n'), []);
  t.deepEqual(oneLetterParameters('a.ts', 'export const n = [1].map((_, index) => index);\n'), []);
});

test('no parameter under src/ and workers/ has a one-letter name outside a tiny lambda', (t) => {
  const files = ['src', 'workers'].flatMap((dir) => sourceFiles(join(ROOT, dir)));
  t.true(files.length > 100, 'the walk found the source files');
  const found = files.flatMap((file) =>
    oneLetterParameters(file, read(file)).map((where) => `${name(file)}:${where}`),
  );
  t.deepEqual(found, [], `one-letter parameters (name what they hold):\n${found.join('\n')}`);
});

test('the word rule reads comments and identifiers, not strings nor the join method', (t) => {
  const words = commentsAndIdentifierWords(
    'a.ts',
    "/** Leads it. */\nexport const leaseClaim = [1].join();\nclass A { #joinedOnce = 1; }\nexport const s = 'leader';\n",
  );
  t.deepEqual(
    words.filter((word) => OTHER_WORDS.test(word)),
    ['/** Leads it. */', 'lease Claim', 'joined Once'],
  );
});

test('the files that follow builds say follow, never coalesce, join, claim or lead', (t) => {
  const files = FOLLOWING_FILES.flatMap((path) => sourceFiles(join(ROOT, path)));
  t.true(files.length > 15, 'the walk found the files');
  const found = files.flatMap((file) =>
    commentsAndIdentifierWords(file, read(file))
      .filter((word) => OTHER_WORDS.test(word))
      .map((word) => `${name(file)}: ${word}`),
  );
  t.deepEqual(found, [], `other words for following:\n${found.join('\n')}`);
});

test('nothing under src/, workers/, test/ or bench/ says coalesce but the metric name', (t) => {
  const self = fileURLToPath(import.meta.url);
  const files = ['src', 'workers', 'test', 'bench'].flatMap((dir) => sourceFiles(join(ROOT, dir)));
  t.true(files.length > 300, 'the walk found the files');
  const found = files
    .filter((file) => file !== self && /coalesc/i.test(read(file).replaceAll(METRIC, '')))
    .map(name);
  t.deepEqual(found, []);
});
