import test from 'ava';
import { isServiceError } from '../../../../src/errors/errors.js';
import { describeDevcontainer, parseMetadataLabel } from '../../../../src/devcontainer/index.js';

const PARSED: { title: string; label: string; expected: unknown[] }[] = [
  {
    title: 'a JSON array',
    label: '[{"id":"a"},{"remoteUser":"u"}]',
    expected: [{ id: 'a' }, { remoteUser: 'u' }],
  },
  { title: 'a single object', label: '{"remoteUser":"u"}', expected: [{ remoteUser: 'u' }] },
  { title: 'non-object items are passed on', label: '[1,{"init":true}]', expected: [1, { init: true }] },
  { title: 'the empty array (the Dev Containers CLI reads it as no entries)', label: '[]', expected: [] },
  { title: 'an empty object', label: '{}', expected: [{}] },
  { title: 'only empty or non-object items', label: '[{}, 1, "x", null]', expected: [{}, 1, 'x', null] },
];
for (const row of PARSED) {
  test(`parseMetadataLabel: ${row.title}`, (t) => {
    t.deepEqual(parseMetadataLabel(row.label), row.expected);
  });
}

const REJECTED: [string, string | undefined, RegExp][] = [
  ['absent', undefined, /no devcontainer\.metadata label/],
  ['not JSON', '[{"a":', /not valid JSON/],
  ['a string', '"text"', /neither a JSON array nor a JSON object/],
  ['a number', '42', /neither/],
  ['null', 'null', /neither/],
];
for (const [title, label, message] of REJECTED) {
  test(`parseMetadataLabel rejects ${title} with a METADATA_LABEL_* 422`, (t) => {
    const error = t.throws(() => parseMetadataLabel(label));
    t.true(isServiceError(error));
    if (!isServiceError(error)) return;
    t.true(error.code.startsWith('METADATA_LABEL_'), error.code);
    t.is(error.status, 422);
    t.regex(error.message, message);
  });
}

test('describeDevcontainer: all result fields from one label', (t) => {
  const entries = parseMetadataLabel(
    JSON.stringify([
      {
        id: 'ghcr.io/devcontainers/features/node:1',
        customizations: { vscode: { extensions: ['dbaeumer.vscode-eslint'] } },
        postCreateCommand: 'npm ci',
      },
      {
        remoteUser: 'node',
        customizations: { vscode: { extensions: ['esbenp.prettier-vscode'], settings: { a: 1 } } },
      },
    ]),
  );
  const view = describeDevcontainer(entries);
  t.is(view.configuration.remoteUser, 'node');
  t.deepEqual(view.configuration.postCreateCommands, ['npm ci']);
  t.deepEqual(view.configuration.customizations, {
    vscode: [
      { extensions: ['dbaeumer.vscode-eslint'] },
      { extensions: ['esbenp.prettier-vscode'], settings: { a: 1 } },
    ],
  });
  t.deepEqual(view.vscode, {
    extensions: ['dbaeumer.vscode-eslint', 'esbenp.prettier-vscode'],
    settings: { a: 1 },
  });
  t.regex(view.lifecycleScripts.postCreateCommand ?? '', /^#!\/bin\/sh\n/);
  t.is(view.lifecycleScripts.onCreateCommand, null);
  t.deepEqual(view.warnings, []);
  t.deepEqual(view.metadata, entries);
});

test('describeDevcontainer: non-object entries are skipped with a warning and left out of metadata', (t) => {
  const view = describeDevcontainer(parseMetadataLabel('[1, {"remoteUser":"u"}, "x", null, [1]]'));
  t.deepEqual(view.metadata, [{ remoteUser: 'u' }]);
  t.is(view.configuration.remoteUser, 'u');
  t.deepEqual(
    view.warnings.map((w) => w.message),
    [
      'skipped label entry #0: a number, not an object',
      'skipped label entry #2: a string, not an object',
      'skipped label entry #3: null, not an object',
      'skipped label entry #4: an array, not an object',
    ],
  );
  t.true(view.warnings.every((w) => w.code === 'skipped_entry'));
});

test('describeDevcontainer: unsubstituted variables are warned once per entry and field', (t) => {
  const view = describeDevcontainer([
    {
      id: 'feat',
      postCreateCommand: 'cd ${containerWorkspaceFolder} && echo ${containerWorkspaceFolder}',
      remoteEnv: { P: '${containerEnv:PATH}:/x', Q: '${localEnv:HOME}' },
    },
    { postCreateCommand: ['echo', '${devcontainerId}'], remoteUser: 'plain' },
  ]);
  const variables = view.warnings.filter((w) => w.code === 'unsubstituted_variable').map((w) => w.message);
  t.is(variables.length, 4);
  t.regex(variables[0] ?? '', /^\$\{containerWorkspaceFolder\} in postCreateCommand of feat /);
  t.regex(variables[1] ?? '', /^\$\{containerEnv:PATH\} in remoteEnv of feat /);
  t.regex(variables[2] ?? '', /^\$\{localEnv:HOME\} in remoteEnv of feat /);
  t.regex(variables[3] ?? '', /^\$\{devcontainerId\} in postCreateCommand of devcontainer\.json /);
  // Left as written everywhere.
  t.deepEqual(view.configuration.remoteEnv, { P: '${containerEnv:PATH}:/x', Q: '${localEnv:HOME}' });
});

test('describeDevcontainer: warnings of lifecycle scripts and extensions are collected', (t) => {
  const view = describeDevcontainer([
    { onCreateCommand: 5, customizations: { vscode: { extensions: [7] } } },
  ]);
  t.deepEqual(
    view.warnings.map((w) => w.code),
    ['skipped_command', 'skipped_extension'],
  );
});

test('describeDevcontainer: the configuration is plain JSON (NaN as null, no undefined)', (t) => {
  const view = describeDevcontainer([{ hostRequirements: { cpus: 'lots', memory: '1gb' } }]);
  t.deepEqual(view.configuration.hostRequirements, { cpus: null, memory: String(2 ** 30) });
  t.deepEqual(JSON.parse(JSON.stringify(view.configuration)), view.configuration);
});
