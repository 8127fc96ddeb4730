// The fixture repositories served by every git server, as data (tests may import this to know what
// each repository contains). Definitions use the base image on the anonymous registry and set
// labels, lifecycle commands and customizations so tests can find them in the image metadata.
// Pure: no I/O here (see components/fixtures.ts for the repositories on disk).

export interface FixtureCommit {
  /** Branch the commit goes on; created from `from` (a branch or tag) when it does not exist yet. */
  branch: string;
  from?: string;
  message: string;
  /** Files written (path -> content) before committing. */
  files: Record<string, string>;
  /** Files made executable. */
  executable?: string[];
  /** An annotated tag put on this commit. */
  tag?: string;
}

/**
 * Generated bulk content (a large monorepo's sources): `files` files of incompressible bytes from a
 * seeded generator, spread over `folders` folders outside the configuration folder, sizes in
 * [minBytes, maxBytes). Added by the first commit; later commits keep it.
 */
export interface FixtureBulk {
  seed: string;
  files: number;
  folders: number;
  minBytes: number;
  maxBytes: number;
}

export interface Fixture {
  name: string;
  description: string;
  commits: FixtureCommit[];
  bulk?: FixtureBulk;
}

export const FIXTURE_NAMES = [
  'image',
  'feature',
  'dockerfile',
  'rootfile',
  'subfolder',
  'noconfig',
  'branches',
  'empty',
  'slow',
  'large',
  'secrets',
] as const;
export type FixtureName = (typeof FIXTURE_NAMES)[number];

const json = (v: unknown): string => `${JSON.stringify(v, null, 2)}\n`;
const readme = (name: string, text: string): string => `# ${name}\n\n${text}\n`;

/** Content of the `branches` fixture per ref: main, dev and tag v1.0.0 all differ. */
export function branchDefinition(base: string, ref: 'main' | 'dev' | 'v1.0.0'): Record<string, unknown> {
  return {
    name: `fixture-branches-${ref}`,
    image: base,
    containerEnv: { FIXTURE: 'branches', FIXTURE_REF: ref },
    postCreateCommand: `echo branches ${ref}`,
    customizations: { vscode: { extensions: [`ibs.fixture-branches-${ref.replace(/\./g, '-')}`] } },
  };
}

/** The bulk of the `large` fixture: 12 000 files, about 110 MB (10^6 bytes), all outside `.devcontainer/`. */
export const LARGE_BULK: FixtureBulk = {
  seed: 'ibs-large-fixture-1',
  files: 12_000,
  folders: 120,
  minBytes: 4_096,
  maxBytes: 14_336,
};

/** The branch of the `large` fixture whose Dockerfile builds a small sub-folder context (`docker/app`). */
export const LARGE_DOCKERFILE_BRANCH = 'dockerfile-context';

/** The local `hello` feature's manifest (beside HELLO_FEATURE_INSTALL); the extension tells the fixtures apart. */
function helloFeatureManifest(vscodeExtension: string, extra: { postCreateCommand?: string } = {}): string {
  return json({
    id: 'hello',
    version: '1.0.0',
    name: 'Hello',
    description: 'Installs a hello command (local fixture feature, no network).',
    options: { greeting: { type: 'string', default: 'hello', description: 'What hello prints' } },
    containerEnv: { HELLO_FEATURE: '1' },
    ...extra,
    customizations: { vscode: { extensions: [vscodeExtension] } },
  });
}

export const HELLO_FEATURE_INSTALL = `#!/bin/sh
set -e
mkdir -p /usr/local/bin
printf '#!/bin/sh\\necho "%s"\\n' "\${GREETING:-hello}" > /usr/local/bin/hello
chmod +x /usr/local/bin/hello
echo "hello feature installed" > /etc/hello-feature
`;

/** The `slow` fixture's RUN step prints this line, then sleeps SLOW_STEP_SECONDS. */
export const SLOW_STEP_STARTED = 'slow step started';
export const SLOW_STEP_SECONDS = 40;

/**
 * A nonce line for a test's own copy of a fixture: BuildKit merges identical steps that run at
 * the same time (noCache or not, build secrets ignored), so a copy whose step must run by itself
 * gets an ENV line no other build has. No nonce: the fixture's own bytes.
 */
const nonceLine = (nonce?: string): string[] =>
  nonce === undefined ? [] : [`ENV IBS_FIXTURE_NONCE=${nonce}`];

/**
 * The `slow` fixture's Dockerfile (with a nonce: a copy whose step no other build shares; with
 * `seconds`: a step silent that long instead of SLOW_STEP_SECONDS).
 */
export const SLOW_FIXTURE_DOCKERFILE = (base: string, nonce?: string, seconds = SLOW_STEP_SECONDS): string =>
  [
    `FROM ${base}`,
    ...nonceLine(nonce),
    `RUN echo "${SLOW_STEP_STARTED}" && sleep ${seconds} && echo "slow step done"`,
    '',
  ].join('\n');

export function fixtureDefinitions(base: string): Fixture[] {
  return [
    {
      name: 'image',
      description: '.devcontainer/devcontainer.json with an image',
      commits: [
        {
          branch: 'main',
          message: 'Add an image-based dev container',
          files: {
            'README.md': readme('image', 'A dev container from an image.'),
            '.devcontainer/devcontainer.json': json({
              name: 'fixture-image',
              image: base,
              remoteUser: 'root',
              containerEnv: { FIXTURE: 'image' },
              postCreateCommand: 'echo fixture-image post-create',
              customizations: {
                vscode: { extensions: ['ibs.fixture-image'], settings: { 'fixture.image': true } },
              },
            }),
          },
        },
      ],
    },
    {
      name: 'feature',
      description: 'a local feature ./features/hello (install.sh + devcontainer-feature.json)',
      commits: [
        {
          branch: 'main',
          message: 'Add a dev container with a local feature',
          executable: ['.devcontainer/features/hello/install.sh'],
          files: {
            'README.md': readme('feature', 'A dev container with a local feature.'),
            '.devcontainer/devcontainer.json': json({
              name: 'fixture-feature',
              image: base,
              features: { './features/hello': { greeting: 'hi from the fixture' } },
              postCreateCommand: 'hello',
              customizations: { vscode: { extensions: ['ibs.fixture-feature'] } },
            }),
            '.devcontainer/features/hello/devcontainer-feature.json': helloFeatureManifest(
              'ibs.hello-feature',
              {
                postCreateCommand: 'hello',
              },
            ),
            '.devcontainer/features/hello/install.sh': HELLO_FEATURE_INSTALL,
          },
        },
      ],
    },
    {
      name: 'dockerfile',
      description: '.devcontainer/devcontainer.json building .devcontainer/build.dockerfile',
      commits: [
        {
          branch: 'main',
          message: 'Add a Dockerfile-based dev container',
          files: {
            'README.md': readme('dockerfile', 'A dev container built from a Dockerfile.'),
            '.devcontainer/devcontainer.json': json({
              name: 'fixture-dockerfile',
              build: { dockerfile: 'build.dockerfile', args: { GREETING: 'from-build-arg' } },
              postStartCommand: 'cat /greeting',
              customizations: { vscode: { extensions: ['ibs.fixture-dockerfile'] } },
            }),
            '.devcontainer/build.dockerfile': [
              `FROM ${base}`,
              'ARG GREETING=hello',
              'RUN echo "$GREETING" > /greeting && mkdir -p /opt/fixture',
              'LABEL org.opencontainers.image.title="fixture-dockerfile"',
              'LABEL ibs.fixture="dockerfile"',
              '',
            ].join('\n'),
          },
        },
      ],
    },
    {
      name: 'rootfile',
      description: 'only .devcontainer.json at the root',
      commits: [
        {
          branch: 'main',
          message: 'Add a root .devcontainer.json',
          files: {
            'README.md': readme('rootfile', 'Only a .devcontainer.json at the root.'),
            '.devcontainer.json': json({
              name: 'fixture-rootfile',
              image: base,
              remoteEnv: { FIXTURE: 'rootfile' },
              postAttachCommand: 'echo attached',
              customizations: { vscode: { extensions: ['ibs.fixture-rootfile'] } },
            }),
          },
        },
      ],
    },
    {
      name: 'subfolder',
      description: 'only .devcontainer/python/devcontainer.json',
      commits: [
        {
          branch: 'main',
          message: 'Add a dev container in a sub-folder',
          files: {
            'README.md': readme('subfolder', 'Only .devcontainer/python/devcontainer.json.'),
            '.devcontainer/python/devcontainer.json': json({
              name: 'fixture-subfolder',
              image: base,
              postCreateCommand: ['echo', 'subfolder'],
              customizations: { vscode: { extensions: ['ibs.fixture-subfolder'] } },
            }),
          },
        },
      ],
    },
    {
      name: 'noconfig',
      description: 'no dev container definition at all',
      commits: [
        {
          branch: 'main',
          message: 'A repository without a dev container',
          files: {
            'README.md': readme('noconfig', 'No dev container definition here.'),
            'src/main.sh': '#!/bin/sh\necho hello\n',
          },
        },
      ],
    },
    {
      name: 'branches',
      description: 'branches main and dev and tag v1.0.0, each with a different definition',
      commits: [
        {
          branch: 'main',
          message: 'Release 1.0.0',
          tag: 'v1.0.0',
          files: {
            'README.md': readme('branches', 'Several branches and a tag.'),
            '.devcontainer/devcontainer.json': json(branchDefinition(base, 'v1.0.0')),
          },
        },
        {
          branch: 'dev',
          from: 'v1.0.0',
          message: 'Development definition',
          files: { '.devcontainer/devcontainer.json': json(branchDefinition(base, 'dev')) },
        },
        {
          branch: 'main',
          message: 'Main definition after 1.0.0',
          files: { '.devcontainer/devcontainer.json': json(branchDefinition(base, 'main')) },
        },
      ],
    },
    { name: 'empty', description: 'no commits at all', commits: [] },
    {
      name: 'slow',
      description: `a Dockerfile whose RUN step prints a line, then sleeps ${SLOW_STEP_SECONDS} s (build with noCache)`,
      commits: [
        {
          branch: 'main',
          message: 'Add a dev container with a slow build step',
          files: {
            'README.md': readme('slow', 'A dev container whose build takes a while.'),
            '.devcontainer/devcontainer.json': json({
              name: 'fixture-slow',
              build: { dockerfile: 'Dockerfile' },
            }),
            '.devcontainer/Dockerfile': SLOW_FIXTURE_DOCKERFILE(base),
          },
        },
      ],
    },
    largeFixture(base),
    secretsFixture(base),
  ];
}

/**
 * A large monorepo: the generated bulk plus, on main, an image with a local feature; on
 * LARGE_DOCKERFILE_BRANCH, a Dockerfile whose build context is the small folder `docker/app`.
 */
function largeFixture(base: string): Fixture {
  return {
    name: 'large',
    description: `${LARGE_BULK.files} generated files (~110 MB) beside a small definition; branch ${LARGE_DOCKERFILE_BRANCH}: a Dockerfile with a sub-folder context`,
    bulk: LARGE_BULK,
    commits: [
      {
        branch: 'main',
        message: 'A large monorepo with a dev container',
        executable: ['.devcontainer/features/hello/install.sh'],
        files: {
          'README.md': readme('large', 'A large monorepo: generated sources beside a small dev container.'),
          '.devcontainer/devcontainer.json': json({
            name: 'fixture-large',
            image: base,
            features: { './features/hello': { greeting: 'hi from the large fixture' } },
            containerEnv: { FIXTURE: 'large' },
            postCreateCommand: 'hello',
            customizations: { vscode: { extensions: ['ibs.fixture-large'] } },
          }),
          '.devcontainer/features/hello/devcontainer-feature.json':
            helloFeatureManifest('ibs.large-hello-feature'),
          '.devcontainer/features/hello/install.sh': HELLO_FEATURE_INSTALL,
        },
      },
      {
        branch: LARGE_DOCKERFILE_BRANCH,
        from: 'main',
        message: 'Build the dev container from docker/app',
        files: {
          '.devcontainer/devcontainer.json': json({
            name: 'fixture-large-dockerfile',
            build: { dockerfile: '../docker/app/Dockerfile', context: '../docker/app' },
            customizations: { vscode: { extensions: ['ibs.fixture-large-dockerfile'] } },
          }),
          'docker/app/Dockerfile': [
            `FROM ${base}`,
            'COPY greeting.txt /greeting',
            'LABEL ibs.fixture="large-dockerfile"',
            '',
          ].join('\n'),
          'docker/app/greeting.txt': 'hello from the docker/app context\n',
        },
      },
    ],
  };
}

/** The build secret the `secrets` fixture's Dockerfile mounts (required). */
export const SECRETS_FIXTURE_ID = 'npmrc';
/** The `secrets` fixture's Dockerfile: one step hashes the mounted secret into /npmrc.sha256. */
export const SECRETS_FIXTURE_DOCKERFILE = (base: string, nonce?: string): string =>
  [
    `FROM ${base}`,
    ...nonceLine(nonce),
    `RUN --mount=type=secret,id=${SECRETS_FIXTURE_ID},required=true sh -c 'sha256sum /run/secrets/${SECRETS_FIXTURE_ID} > /npmrc.sha256'`,
    'LABEL ibs.fixture="secrets"',
    '',
  ].join('\n');

/** A Dockerfile-based definition whose step needs the build secret `npmrc` (docs/secrets.md). */
function secretsFixture(base: string): Fixture {
  return {
    name: 'secrets',
    description: `a Dockerfile whose RUN step mounts the build secret ${SECRETS_FIXTURE_ID} (required) and records its sha256`,
    commits: [
      {
        branch: 'main',
        message: 'Add a dev container whose build mounts a secret',
        files: {
          'README.md': readme('secrets', 'A dev container whose build needs a build secret.'),
          '.devcontainer/devcontainer.json': json({
            name: 'fixture-secrets',
            build: { dockerfile: 'Dockerfile' },
          }),
          '.devcontainer/Dockerfile': SECRETS_FIXTURE_DOCKERFILE(base),
        },
      },
    ],
  };
}
