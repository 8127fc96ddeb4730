import test from 'ava';
import {
  MERGE_TABLE,
  mergeConfiguration,
  mountStringTarget,
  sizeInBytes,
} from '../../../../src/devcontainer/merge.js';

type Entry = Record<string, unknown>;

// One row per rule of the Dev Containers CLI merge: entries in label order -> the merged field.
// `undefined` means the field is absent from the configuration.
const ROWS: { field: string; title: string; entries: Entry[]; expected: unknown }[] = [
  // init / privileged: any truthy
  {
    field: 'init',
    title: 'false when no entry sets it',
    entries: [{}, { remoteUser: 'x' }],
    expected: false,
  },
  {
    field: 'init',
    title: 'true if any entry is true',
    entries: [{ init: false }, { init: true }],
    expected: true,
  },
  { field: 'init', title: 'truthy non-boolean counts', entries: [{ init: 'yes' }], expected: true },
  {
    field: 'privileged',
    title: 'falsy values do not',
    entries: [{ privileged: 0 }, { privileged: '' }],
    expected: false,
  },
  {
    field: 'privileged',
    title: 'one true among many',
    entries: [{ privileged: null }, { privileged: 1 }],
    expected: true,
  },

  // capAdd / securityOpt: union, first seen
  { field: 'capAdd', title: 'absent when none', entries: [{}, { capAdd: [] }], expected: undefined },
  {
    field: 'capAdd',
    title: 'union in first-seen order',
    entries: [{ capAdd: ['B', 'A'] }, { capAdd: ['A', 'C', 'B'] }],
    expected: ['B', 'A', 'C'],
  },
  {
    field: 'capAdd',
    title: 'a bare string is one item',
    entries: [{ capAdd: 'X' }, { capAdd: ['X', 'Y'] }],
    expected: ['X', 'Y'],
  },
  {
    field: 'securityOpt',
    title: 'union of securityOpt',
    entries: [{ securityOpt: ['seccomp=unconfined'] }, { securityOpt: ['apparmor=x', 'seccomp=unconfined'] }],
    expected: ['seccomp=unconfined', 'apparmor=x'],
  },

  // entrypoints
  { field: 'entrypoints', title: 'absent when none', entries: [{ entrypoint: '' }], expected: undefined },
  {
    field: 'entrypoints',
    title: 'each entrypoint in order, duplicates kept',
    entries: [{ entrypoint: '/a.sh' }, {}, { entrypoint: '/b.sh' }, { entrypoint: '/a.sh' }],
    expected: ['/a.sh', '/b.sh', '/a.sh'],
  },

  // mounts: one per target, last wins
  { field: 'mounts', title: 'absent when none', entries: [{ mounts: [] }], expected: undefined },
  {
    field: 'mounts',
    title: 'same target: the last wins, at its position',
    entries: [
      { mounts: ['source=a,target=/data,type=volume', 'source=b,target=/other,type=volume'] },
      { mounts: [{ type: 'bind', source: '/h', target: '/data' }] },
    ],
    expected: ['source=b,target=/other,type=volume', { type: 'bind', source: '/h', target: '/data' }],
  },
  {
    field: 'mounts',
    title: 'dst and destination are target',
    entries: [{ mounts: ['src=a,dst=/x'] }, { mounts: ['source=b,destination=/x'] }],
    expected: ['source=b,destination=/x'],
  },
  {
    field: 'mounts',
    title: 'mounts without target share one slot',
    entries: [{ mounts: ['type=volume,source=a'] }, { mounts: ['type=volume,source=b'] }],
    expected: ['type=volume,source=b'],
  },
  {
    field: 'mounts',
    title: 'a bare string value is one mount',
    entries: [{ mounts: 'source=a,target=/t' }],
    expected: ['source=a,target=/t'],
  },

  // customizations
  {
    field: 'customizations',
    title: 'absent when none',
    entries: [{}, { customizations: {} }],
    expected: undefined,
  },
  {
    field: 'customizations',
    title: 'per tool key, each entry value in order',
    entries: [
      { customizations: { vscode: { extensions: ['a.b'] }, jetbrains: { backend: 'X' } } },
      { customizations: { vscode: { settings: { s: 1 } } } },
      { customizations: { jetbrains: null } },
    ],
    expected: {
      vscode: [{ extensions: ['a.b'] }, { settings: { s: 1 } }],
      jetbrains: [{ backend: 'X' }, null],
    },
  },
  {
    field: 'customizations',
    title: 'a key named like an Object.prototype member is an ordinary key',
    entries: [{ customizations: { constructor: 1 } }, { customizations: { constructor: 2 } }],
    expected: { constructor: [1, 2] },
  },

  // commands
  { field: 'onCreateCommands', title: 'empty array when none', entries: [{}], expected: [] },
  {
    field: 'postCreateCommands',
    title: 'original forms in entry order; falsy values dropped',
    entries: [
      { postCreateCommand: 'echo a' },
      { postCreateCommand: '' },
      { postCreateCommand: ['echo', 'b'] },
      { postCreateCommand: { x: 'echo x', y: ['echo', 'y'] } },
    ],
    expected: ['echo a', ['echo', 'b'], { x: 'echo x', y: ['echo', 'y'] }],
  },
  {
    field: 'updateContentCommands',
    title: 'updateContentCommand collected',
    entries: [{ updateContentCommand: 'u1' }, { updateContentCommand: 'u2' }],
    expected: ['u1', 'u2'],
  },
  {
    field: 'postStartCommands',
    title: 'postStartCommand collected',
    entries: [{ postStartCommand: 's' }],
    expected: ['s'],
  },
  {
    field: 'postAttachCommands',
    title: 'postAttachCommand collected',
    entries: [{ postAttachCommand: [] }],
    expected: [[]],
  },

  // last truthy
  { field: 'remoteUser', title: 'absent when none', entries: [{ remoteUser: '' }], expected: undefined },
  {
    field: 'remoteUser',
    title: 'the last truthy wins',
    entries: [{ remoteUser: 'a' }, { remoteUser: 'b' }, { remoteUser: '' }, { remoteUser: null }],
    expected: 'b',
  },
  { field: 'containerUser', title: 'containerUser', entries: [{ containerUser: 'c' }, {}], expected: 'c' },
  { field: 'waitFor', title: 'waitFor', entries: [{ waitFor: 'a' }, { waitFor: 'b' }], expected: 'b' },
  { field: 'userEnvProbe', title: 'userEnvProbe', entries: [{ userEnvProbe: 'none' }], expected: 'none' },
  {
    field: 'shutdownAction',
    title: 'shutdownAction',
    entries: [{ shutdownAction: 'x' }, { shutdownAction: 0 }],
    expected: 'x',
  },
  {
    field: 'otherPortsAttributes',
    title: 'otherPortsAttributes is replaced, not merged',
    entries: [{ otherPortsAttributes: { a: 1 } }, { otherPortsAttributes: { b: 2 } }],
    expected: { b: 2 },
  },

  // last boolean
  {
    field: 'overrideCommand',
    title: 'absent when no boolean',
    entries: [{ overrideCommand: 'true' }],
    expected: undefined,
  },
  {
    field: 'overrideCommand',
    title: 'the last boolean wins, false included',
    entries: [{ overrideCommand: true }, { overrideCommand: false }, { overrideCommand: 'x' }],
    expected: false,
  },
  {
    field: 'updateRemoteUserUID',
    title: 'updateRemoteUserUID last boolean',
    entries: [{ updateRemoteUserUID: false }, { updateRemoteUserUID: true }, { updateRemoteUserUID: null }],
    expected: true,
  },

  // shallow merges
  { field: 'remoteEnv', title: 'empty object when none', entries: [{}], expected: {} },
  {
    field: 'remoteEnv',
    title: 'later wins, nulls kept',
    entries: [{ remoteEnv: { A: '1', B: '2' } }, { remoteEnv: { B: null, C: '3' } }],
    expected: { A: '1', B: null, C: '3' },
  },
  {
    field: 'containerEnv',
    title: 'a __proto__ key never becomes a key or a prototype',
    entries: [JSON.parse('{"containerEnv": {"__proto__": {"polluted": 1}, "A": "1"}}') as Entry],
    expected: { A: '1' },
  },
  {
    field: 'portsAttributes',
    title: 'per port, the later object replaces the earlier',
    entries: [
      { portsAttributes: { '3000': { label: 'a', protocol: 'https' } } },
      { portsAttributes: { '3000': { label: 'b' } } },
    ],
    expected: { '3000': { label: 'b' } },
  },
  {
    field: 'remoteEnv',
    title: 'a string merges by index (as Object.assign)',
    entries: [{ remoteEnv: 'ab' }],
    expected: { 0: 'a', 1: 'b' },
  },

  // forwardPorts
  { field: 'forwardPorts', title: 'absent when none', entries: [{ forwardPorts: [] }], expected: undefined },
  {
    field: 'forwardPorts',
    title: 'union; localhost:N is the number N',
    entries: [{ forwardPorts: [3000, 'db:5432'] }, { forwardPorts: ['localhost:3000', 8080, 'db:5432'] }],
    expected: [3000, 'db:5432', 8080],
  },
  {
    field: 'forwardPorts',
    title: 'a bare string is one port',
    entries: [{ forwardPorts: 'localhost:9229' }],
    expected: [9229],
  },

  // hostRequirements
  { field: 'hostRequirements', title: 'absent when none', entries: [{}, {}], expected: undefined },
  {
    field: 'hostRequirements',
    title: 'maximum per field, sizes in bytes',
    entries: [
      { hostRequirements: { cpus: 2, memory: '4gb', storage: '32gb' } },
      { hostRequirements: { cpus: 4, memory: '512mb' } },
    ],
    expected: { cpus: 4, memory: String(4 * 2 ** 30), storage: String(32 * 2 ** 30) },
  },
  {
    field: 'hostRequirements',
    title: 'memory only: cpus 0 is kept',
    entries: [{ hostRequirements: { memory: '1kb' } }],
    expected: { cpus: 0, memory: '1024' },
  },
  {
    field: 'hostRequirements',
    title: 'gpu optional + optional',
    entries: [{ hostRequirements: { gpu: 'optional' } }, { hostRequirements: { gpu: 'optional' } }],
    expected: { cpus: 0, gpu: 'optional' },
  },
  {
    field: 'hostRequirements',
    title: 'gpu true and false: true',
    entries: [{ hostRequirements: { gpu: true } }, { hostRequirements: { gpu: false } }],
    expected: { cpus: 0, gpu: true },
  },
  {
    field: 'hostRequirements',
    title: 'gpu objects: maximum cores and memory',
    entries: [
      { hostRequirements: { gpu: { cores: 2, memory: '1gb' } } },
      { hostRequirements: { gpu: { cores: 8 } } },
    ],
    expected: { cpus: 0, gpu: { cores: 8, memory: String(2 ** 30) } },
  },
  {
    field: 'hostRequirements',
    title: 'gpu optional with an object: the object (no cores, no memory)',
    entries: [{ hostRequirements: { gpu: 'optional' } }, { hostRequirements: { gpu: true } }],
    expected: { cpus: 0, gpu: {} },
  },
];

for (const row of ROWS) {
  test(`merge ${row.field}: ${row.title}`, (t) => {
    const merged = JSON.parse(JSON.stringify(mergeConfiguration(row.entries))) as Record<string, unknown>;
    t.deepEqual(merged[row.field], row.expected);
    if (row.expected === undefined) t.false(Object.hasOwn(merged, row.field));
  });
}

test('every field of the merge table has at least one row', (t) => {
  const covered = new Set(ROWS.map((r) => r.field));
  t.deepEqual(
    MERGE_TABLE.map(([field]) => field).filter((f) => !covered.has(f)),
    [],
  );
});

test('the configuration of a simple label has exactly the CLI fields', (t) => {
  t.deepEqual(mergeConfiguration([{ remoteUser: 'u', postCreateCommand: 'x' }]), {
    init: false,
    privileged: false,
    onCreateCommands: [],
    updateContentCommands: [],
    postCreateCommands: ['x'],
    postStartCommands: [],
    postAttachCommands: [],
    remoteUser: 'u',
    remoteEnv: {},
    containerEnv: {},
    portsAttributes: {},
  });
});

test('no label key reaches Object.prototype', (t) => {
  mergeConfiguration([
    JSON.parse(
      '{"remoteEnv": {"__proto__": {"polluted": 1}}, "customizations": {"__proto__": {"polluted": 1}}}',
    ) as Entry,
  ]);
  t.is(({} as Record<string, unknown>).polluted, undefined);
});

const SIZES: [unknown, number][] = [
  ['0', 0],
  ['1024', 1024],
  ['2kb', 2048],
  ['3mb', 3 * 2 ** 20],
  ['4gb', 4 * 2 ** 30],
  ['1tb', 2 ** 40],
  ['4GB', 0],
  ['4 gb', 0],
  ['1.5gb', 0],
  [512, 512],
];
for (const [size, bytes] of SIZES) {
  test(`sizeInBytes(${JSON.stringify(size)}) = ${bytes}`, (t) => t.is(sizeInBytes(size), bytes));
}

const TARGETS: [string, string | undefined][] = [
  ['type=bind,source=/a,target=/b', '/b'],
  ['dst=/d', '/d'],
  ['destination=/d2,type=volume', '/d2'],
  ['target=/b=c', '/b'],
  ['target=/one,target=/two', '/two'],
  ['type=volume,source=x', undefined],
  ['target', undefined],
  [' target=/t', undefined],
];
for (const [mount, target] of TARGETS) {
  test(`mountStringTarget(${JSON.stringify(mount)})`, (t) => t.is(mountStringTarget(mount), target));
}

test('the merge of no entries (a `[]` label) is the defaults', (t) => {
  t.deepEqual(mergeConfiguration([]), {
    init: false,
    privileged: false,
    onCreateCommands: [],
    updateContentCommands: [],
    postCreateCommands: [],
    postStartCommands: [],
    postAttachCommands: [],
    remoteEnv: {},
    containerEnv: {},
    portsAttributes: {},
  });
});
