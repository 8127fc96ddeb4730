/**
 * The import rules of ARCHITECTURE.md, checked by `npm run lint` (depcruise src workers).
 * LAYERS lists every folder from the ground up: a folder imports only folders of lower layers
 * (never one of its own layer, never one above). A folder's sub-folders belong to it unless
 * listed themselves. No file cycle, no folder cycle; the pure modules do no I/O.
 */

/** Ground floor first. `src` and `workers` stand for the files directly in them. */
const LAYERS = [
  ['src/rules'],
  ['src/errors', 'src/secrets'],
  ['src/config'],
  ['src/observability'],
  ['src/redis'],
  ['src/logs', 'src/registry', 'src/builds', 'src/devcontainer', 'src/prebuilds', 'src/auth', 'src/queue'],
  ['src/usage'],
  ['src/exec', 'src/supply-chain', 'src/retention', 'src/events', 'src/ui'],
  ['workers/plan', 'workers/common', 'workers/leases', 'workers/stages'],
  ['workers/queue'],
  ['workers/builder'],
  ['workers/git'],
  ['workers/reuse'],
  ['workers/prebuilds'],
  ['workers/job'],
  ['workers/flow'],
  ['workers'],
  ['src/http', 'src/client'],
  ['src'],
];

/** What the HTTP layer may use of the build worker: its interface and the plan. */
const WORKER_INTERFACE = ['workers/build-worker\\.ts$', 'workers/plan/'];

/** The modules that do no I/O: whole folders, then single files. */
const PURE = [
  'src/rules/',
  'src/secrets/',
  'src/devcontainer/',
  'workers/plan/',
  'src/http/build-schema\\.ts$',
  'src/builds/records\\.ts$',
  'src/auth/rules\\.ts$',
  'src/queue/fair-order\\.ts$',
  'src/config/redis-url\\.ts$',
  'src/config/registry-mapping\\.ts$',
  'src/exec/line-gate\\.ts$',
  'src/redis/keys\\.ts$',
  'src/events/(envelope|filter|outcome|schedule|purl|recent-deliveries)\\.ts$',
  'src/redis/change-counter\\.ts$',
  'src/usage/(buckets|counters|metering|report|query|budget)\\.ts$',
  'workers/builder/read-set\\.ts$',
  'workers/git/sparse-patterns\\.ts$',
  'workers/git/tree-listing\\.ts$',
  'src/client/(retry|exit-codes|mask|args|build-request|poll-wait)\\.ts$',
];
const IO_CORE = '^(node:)?(child_process|fs|fs/promises|net|http|https|http2|dns|tls|dgram)$';
/** Project modules that do I/O: a pure module imports none of them. */
const IO_MODULES = ['^src/exec/(?!line-gate)', '^src/logs/store', '^src/registry/(client|transport)'];

const escapeRegExp = (folder) => folder.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
/** The files of a folder entry: `src`/`workers` only their own files, others their whole tree. */
const filesOf = (folder) => (folder.includes('/') ? `^${escapeRegExp(folder)}/` : `^${folder}/[^/]+$`);
const listed = LAYERS.flat();
/** A nested folder listed on its own is not part of its parent's entry. */
const nestedOf = (folder) => listed.filter((f) => f !== folder && f.startsWith(`${folder}/`)).map(filesOf);

function layerRules() {
  return LAYERS.flatMap((layer, i) =>
    layer.map((folder) => ({
      name: `layer:${folder}`,
      comment: `${folder} imports only folders of lower layers (ARCHITECTURE.md).`,
      severity: 'error',
      from: { path: filesOf(folder), pathNot: nestedOf(folder) },
      to: {
        path: '^(src|workers)/',
        pathNot: [filesOf(folder), ...LAYERS.slice(0, i).flat().map(filesOf)],
      },
    })),
  );
}

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No file imports itself through others (type-only imports count).',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-circular-folders',
      comment: 'No folder imports itself through others.',
      severity: 'error',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-import-of-root-files',
      comment:
        'The files directly in src/ and workers/ are the top of their tree: nothing below imports them.',
      severity: 'error',
      from: { path: '^(src|workers)/.+/' },
      to: { path: '^$1/[^/]+$' },
    },
    {
      name: 'in-a-layer',
      comment: 'Every folder of src/ and workers/ is listed in LAYERS (.dependency-cruiser.cjs).',
      severity: 'error',
      from: { path: '^(src|workers)/', pathNot: listed.map(filesOf) },
      to: {},
    },
    ...layerRules(),
    {
      name: 'http-uses-the-worker-interface',
      comment: 'src/http uses the build worker through its interface and the plan only.',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: '^workers/', pathNot: WORKER_INTERFACE },
    },
    {
      name: 'pure-no-io',
      comment: 'A pure module does no I/O (see ARCHITECTURE.md).',
      severity: 'error',
      from: { path: PURE },
      to: { path: [IO_CORE, '(^|/)node_modules/execa/', ...IO_MODULES] },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
