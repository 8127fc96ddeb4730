import test from 'ava';
import { mergeVscode } from '../../../../src/devcontainer/vscode.js';

type Entry = Record<string, unknown>;

const vscode = (extensions?: unknown, settings?: unknown, id?: string): Entry => ({
  ...(id === undefined ? {} : { id }),
  customizations: {
    vscode: {
      ...(extensions === undefined ? {} : { extensions }),
      ...(settings === undefined ? {} : { settings }),
    },
  },
});

const EXTENSION_ROWS: { title: string; entries: Entry[]; expected: string[] }[] = [
  { title: 'none', entries: [{}, { customizations: { jetbrains: {} } }], expected: [] },
  {
    title: 'union in entry order',
    entries: [vscode(['a.one', 'b.two']), vscode(['c.three']), vscode(['a.one'])],
    expected: ['a.one', 'b.two', 'c.three'],
  },
  {
    title: 'case-insensitive de-duplication keeps the first spelling',
    entries: [vscode(['MS-Python.Python']), vscode(['ms-python.python', 'ms-python.PYTHON'])],
    expected: ['MS-Python.Python'],
  },
  {
    title: '-publisher.name removes an earlier one, any case',
    entries: [vscode(['a.keep', 'Dbaeumer.Vscode-Eslint']), vscode(['-dbaeumer.vscode-eslint'])],
    expected: ['a.keep'],
  },
  {
    title: 'a removal does not block a later addition',
    entries: [vscode(['x.y']), vscode(['-x.y']), vscode(['X.Y'])],
    expected: ['X.Y'],
  },
  {
    title: 'a removal of something never added is harmless',
    entries: [vscode(['-not.there', 'a.b'])],
    expected: ['a.b'],
  },
  {
    title: 'duplicates within one entry',
    entries: [vscode(['a.b', 'A.B', 'c.d'])],
    expected: ['a.b', 'c.d'],
  },
];

for (const row of EXTENSION_ROWS) {
  test(`extensions: ${row.title}`, (t) => {
    const { vscode: merged, warnings } = mergeVscode(row.entries);
    t.deepEqual(merged.extensions, row.expected);
    t.deepEqual(warnings, []);
  });
}

const SETTINGS_ROWS: { title: string; entries: Entry[]; expected: Record<string, unknown> }[] = [
  { title: 'none', entries: [vscode(['a.b'])], expected: {} },
  {
    title: 'merged per key, later wins',
    entries: [
      vscode(undefined, { 'editor.tabSize': 2, 'files.eol': '\n' }),
      vscode(undefined, { 'editor.tabSize': 4, 'python.path': '/usr/bin/python3' }),
    ],
    expected: { 'editor.tabSize': 4, 'files.eol': '\n', 'python.path': '/usr/bin/python3' },
  },
  {
    title: 'values are replaced whole, not deep-merged',
    entries: [vscode(undefined, { 'x.obj': { a: 1, b: 2 } }), vscode(undefined, { 'x.obj': { b: 3 } })],
    expected: { 'x.obj': { b: 3 } },
  },
  {
    title: 'null is a value',
    entries: [vscode(undefined, { a: 1 }), vscode(undefined, { a: null })],
    expected: { a: null },
  },
];

for (const row of SETTINGS_ROWS) {
  test(`settings: ${row.title}`, (t) => {
    t.deepEqual(mergeVscode(row.entries).vscode.settings, row.expected);
  });
}

test('settings: a __proto__ key is an ordinary key, nothing is polluted', (t) => {
  const entry = JSON.parse(
    '{"customizations": {"vscode": {"settings": {"__proto__": {"polluted": 1}, "a": 1}}}}',
  ) as Entry;
  const { settings } = mergeVscode([entry]).vscode;
  t.deepEqual(Object.keys(settings), ['__proto__', 'a']);
  t.is(Object.getPrototypeOf(settings), Object.prototype);
  t.is(({} as Record<string, unknown>).polluted, undefined);
  t.is(JSON.stringify(settings), '{"__proto__":{"polluted":1},"a":1}');
});

test('non-string extensions are skipped with a warning', (t) => {
  const { vscode: merged, warnings } = mergeVscode([
    vscode(['a.b', 42, null, { id: 'x' }, ''], undefined, 'feat'),
  ]);
  t.deepEqual(merged.extensions, ['a.b']);
  t.deepEqual(
    warnings.map((w) => w.code),
    ['skipped_extension', 'skipped_extension', 'skipped_extension', 'skipped_extension'],
  );
  t.regex(warnings[0]?.message ?? '', /42 of feat/);
});

test('extensions that are not an array, settings that are not an object: warnings', (t) => {
  const { vscode: merged, warnings } = mergeVscode([vscode('a.b', ['x']), vscode(['c.d'], { ok: true })]);
  t.deepEqual(merged, { extensions: ['c.d'], settings: { ok: true } });
  t.deepEqual(
    warnings.map((w) => w.code),
    ['skipped_extension', 'skipped_settings'],
  );
});

test('customizations.vscode that is not an object: a warning', (t) => {
  const { vscode: merged, warnings } = mergeVscode([{ customizations: { vscode: 'text' } }, vscode(['a.b'])]);
  t.deepEqual(merged.extensions, ['a.b']);
  t.deepEqual(
    warnings.map((w) => w.code),
    ['unexpected_type'],
  );
});
