import test from 'ava';
import { parseJsonc } from '../../../../workers/builder/jsonc.js';

const cases: [string, string, unknown][] = [
  ['plain JSON', '{"a": [1, 2]}', { a: [1, 2] }],
  ['line comments', '{\n // c\n "a": 1 // d\n}', { a: 1 }],
  ['block comments', '{/* x */"a": /* y */ 1}', { a: 1 }],
  ['trailing commas', '{"a": [1, 2,], "b": {"c": 1,},}', { a: [1, 2], b: { c: 1 } }],
  [
    'comment markers inside strings stay',
    '{"u": "http://x/*y*/", "v": "a // b"}',
    { u: 'http://x/*y*/', v: 'a // b' },
  ],
  ['commas inside strings stay', '{"a": ",}"}', { a: ',}' }],
  ['escaped quotes', '{"a": "q\\"//,}"}', { a: 'q"//,}' }],
];

for (const [name, text, expected] of cases) {
  test(`parseJsonc: ${name}`, (t) => t.deepEqual(parseJsonc(text), expected));
}

test('parseJsonc: invalid input throws', (t) => {
  t.throws(() => parseJsonc('{"a": }'));
});
