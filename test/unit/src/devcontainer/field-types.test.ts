import test from 'ava';
import { fieldTypeWarnings } from '../../../../src/devcontainer/field-types.js';

const ROWS: { title: string; entry: Record<string, unknown>; messages: string[] }[] = [
  {
    title: 'schema types: no warning',
    entry: {
      init: true,
      capAdd: ['X'],
      remoteUser: 'u',
      remoteEnv: { A: '1' },
      forwardPorts: [1],
      hostRequirements: { cpus: 1 },
      postCreateCommand: 'x',
      unknownField: 1,
    },
    messages: [],
  },
  { title: 'null means unset', entry: { remoteEnv: null, capAdd: null, init: null }, messages: [] },
  {
    title: 'a string remoteEnv',
    entry: { id: 'feat', remoteEnv: 'ab' },
    messages: [
      'remoteEnv of feat is a string, expected an object; merged as the Dev Containers CLI merges it',
    ],
  },
  {
    title: 'a bare capAdd string and a numeric remoteUser',
    entry: { capAdd: 'SYS_PTRACE', remoteUser: 1000 },
    messages: [
      'capAdd of devcontainer.json is a string, expected an array; merged as the Dev Containers CLI merges it',
      'remoteUser of devcontainer.json is a number, expected a string; merged as the Dev Containers CLI merges it',
    ],
  },
  {
    title: 'an array where an object belongs; a string boolean',
    entry: { portsAttributes: ['x'], init: 'yes' },
    messages: [
      'portsAttributes of devcontainer.json is an array, expected an object; merged as the Dev Containers CLI merges it',
      'init of devcontainer.json is a string, expected a boolean; merged as the Dev Containers CLI merges it',
    ],
  },
];

for (const row of ROWS) {
  test(`field types: ${row.title}`, (t) => {
    const warnings = fieldTypeWarnings([row.entry]);
    t.deepEqual(
      warnings.map((w) => w.message),
      row.messages,
    );
    t.true(warnings.every((w) => w.code === 'unexpected_type'));
  });
}
