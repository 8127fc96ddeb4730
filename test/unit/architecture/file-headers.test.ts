/**
 * A file's header says why the file exists in at most 6 lines (reference
 * detail lives in docs/), and comments cite docs/ or docs/openapi.yaml, never "the contract", a
 * document the repository does not hold. Comments are found by the TypeScript parser, so a
 * comment-like text inside a string or a regular expression is not taken for one.
 */
import test from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { comments } from '../../helpers/ts-comments.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const MAX_HEADER_LINES = 6;
const ABSENT_DOC = /\bthe contract\b/i;

/** Lines of the first comment block: between `/*` and `*\/` lines, or a whole run of `//` lines. */
export function headerLines(fileName: string, text: string): number {
  const all = comments(fileName, text);
  const first = all[0];
  if (first === undefined) return 0;
  if (first.kind === ts.SyntaxKind.MultiLineCommentTrivia) {
    return Math.max(0, text.slice(first.pos, first.end).split('\n').length - 2);
  }
  let lines = 1;
  let end = first.end;
  for (const next of all.slice(1)) {
    const gap = text.slice(end, next.pos);
    if (next.kind !== ts.SyntaxKind.SingleLineCommentTrivia || !/^[ \t]*\r?\n[ \t]*$/.test(gap)) break;
    lines += 1;
    end = next.end;
  }
  return lines;
}

/** Whether a comment of `text` cites "the contract" (also when the words are split over lines). */
export function citesAbsentDoc(fileName: string, text: string): boolean {
  return comments(fileName, text).some((c) =>
    ABSENT_DOC.test(text.slice(c.pos, c.end).replace(/\s*\n\s*(?:\*(?!\/)|\/\/)?\s*/g, ' ')),
  );
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(?:ts|cjs)$/.test(entry.name) ? [path] : [];
  });
}

const files = ['src', 'workers'].flatMap((dir) => sourceFiles(join(ROOT, dir)));
const read = (file: string): string => readFileSync(file, 'utf8');
const name = (file: string): string => relative(ROOT, file);

test('the header rule counts the lines inside the first comment block', (t) => {
  const body = (n: number): string => Array.from({ length: n }, (_, i) => ` * line ${i}\n`).join('');
  t.is(headerLines('a.ts', `/**\n${body(6)} */\nexport const a = 1;\n`), 6);
  t.is(headerLines('a.ts', `/**\n${body(7)} */\nexport const a = 1;\n`), 7);
  t.is(headerLines('a.ts', `/** One line. */\nexport const a = 1;\n/**\n${body(9)} */\n`), 0);
  t.is(headerLines('a.cjs', `'use strict';\n/**\n${body(8)} */\nconst a = 1;\n`), 8);
  t.is(headerLines('a.ts', `// one\n// two\n// three\n\n// apart\nexport const a = 1;\n`), 3);
  t.is(headerLines('a.ts', `export const glob = 'src/**/*.ts';\nexport const re = /\\/*/;\n`), 0);
  t.is(headerLines('a.ts', 'export const a = 1;\n'), 0);
});

test('the citation rule finds "the contract" in any comment, even over two lines', (t) => {
  t.true(citesAbsentDoc('a.ts', '/** As the contract says. */\nexport const a = 1;\n'));
  t.true(citesAbsentDoc('a.ts', 'export const a = 1; // per The Contract\n'));
  t.true(citesAbsentDoc('a.ts', '/**\n * as the\n * contract says\n */\nexport const a = 1;\n'));
  t.false(citesAbsentDoc('a.ts', "/** See docs/openapi.yaml. */\nexport const a = 'the contract';\n"));
  t.false(citesAbsentDoc('a.ts', '/** A contractor, the contracts. */\nexport const a = 1;\n'));
});

test(`every file header under src/ and workers/ is at most ${MAX_HEADER_LINES} lines`, (t) => {
  t.true(files.length > 100, 'the walk found the source files');
  const long = files
    .map((file) => [name(file), headerLines(file, read(file))] as const)
    .filter(([, lines]) => lines > MAX_HEADER_LINES)
    .map(([file, lines]) => `${file}: header of ${lines} lines`);
  t.deepEqual(long, [], `headers over ${MAX_HEADER_LINES} lines (move detail to docs/):\n${long.join('\n')}`);
});

test('no comment under src/ and workers/ cites "the contract" (cite docs/ instead)', (t) => {
  const citing = files.filter((file) => citesAbsentDoc(file, read(file))).map(name);
  t.deepEqual(citing, [], `comments citing "the contract":\n${citing.join('\n')}`);
});
