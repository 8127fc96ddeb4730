import { spawnSync } from 'node:child_process';
import test from 'ava';
import { isValidRefName } from '../../../../workers/plan/ref-name.js';

const valid = [
  'main',
  'dev',
  'v1.0.0',
  'feature/x',
  'release/2024.01',
  'a-b_c',
  'HEAD2',
  'x@y',
  'ü-branch',
  'a.b/c.d',
];

const invalid: [string, string][] = [
  ['', 'empty'],
  ['--upload-pack=x', 'option-like'],
  ['-b', 'leading dash'],
  ['@', 'single @'],
  ['a..b', 'double dot'],
  ['a@{1}', '@{'],
  ['a b', 'space'],
  ['a\tb', 'tab'],
  ['a\nb', 'LF'],
  ['a\r\nb', 'CRLF'],
  ['a\u0000b', 'NUL'],
  ['a\u007fb', 'DEL'],
  ['a~1', 'tilde'],
  ['a^', 'caret'],
  ['a:b', 'colon'],
  ['a?', 'question mark'],
  ['a*', 'star'],
  ['a[b', 'bracket'],
  ['a\\b', 'backslash'],
  ['a.', 'trailing dot'],
  ['a/', 'trailing slash'],
  ['/a', 'leading slash'],
  ['a//b', 'double slash'],
  ['a.lock', '.lock'],
  ['a/b.lock/c', '.lock component'],
  ['.a', 'leading dot'],
  ['a/.b', 'component leading dot'],
  ['x'.repeat(256), 'too long'],
];

test('valid ref names', (t) => {
  for (const name of valid) t.true(isValidRefName(name), name);
});

for (const [name, why] of invalid) {
  test(`invalid ref name: ${why}`, (t) => {
    t.false(isValidRefName(name));
  });
}

// The TS rules agree with git itself wherever git can be asked (names not starting with `-`).
test('agrees with git check-ref-format --allow-onelevel', (t) => {
  const names = [...valid, ...invalid.map(([n]) => n)].filter(
    (n) => !n.startsWith('-') && !n.includes('\u0000') && n.length <= 255,
  );
  for (const name of names) {
    const git = spawnSync('git', ['check-ref-format', '--allow-onelevel', name]);
    t.is(isValidRefName(name), git.status === 0, JSON.stringify(name));
  }
});
