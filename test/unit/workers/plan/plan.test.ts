import test, { type ExecutionContext } from 'ava';
import type { Config } from '../../../../src/config/types.js';
import { ERRORS, type ErrorCode, type ServiceError } from '../../../../src/errors/errors.js';
import { parseBuildRequest } from '../../../../src/http/build-schema.js';
import type { BuildPlan } from '../../../../workers/plan/plan-types.js';
import { planBuild as planRequest } from '../../../../workers/plan/plan.js';
import { testConfig, type ConfigOverrides } from '../../../helpers/app.js';

/** What POST /build does with a body: the shape check, then the plan. */
const planBuild = (body: unknown, cfg: Config): BuildPlan => planRequest(parseBuildRequest(body), cfg);

const SHAPE = ERRORS.INVALID_FIELDS.text;
const REPO = 'https://git.example.com/org/app.git';
const REG = { image: { registry: 'registry.example.com' } };

function config(overrides: ConfigOverrides = {}): Config {
  return testConfig({ scratchDir: '/nonexistent', ...overrides });
}

function refusal(t: ExecutionContext, body: unknown, cfg: Config = config()): ServiceError {
  const err = t.throws(() => planBuild(body, cfg)) as ServiceError;
  t.is(err.status, 400, JSON.stringify(body));
  return err;
}

test('the shape-check text starts as the contract says and lists every optional field', (t) => {
  t.true(SHAPE.startsWith('missing or invalid fields: repository (required); '));
  for (const field of [
    'branch',
    'image',
    'gitCredentials',
    'registryCredentials',
    'platforms',
    'buildOptions',
  ])
    t.true(SHAPE.includes(`${field} (optional`), field);
  for (const sub of [
    'registry',
    'name',
    'tag',
    'username',
    'token',
    'password',
    'noCache',
    'cacheFrom',
    'cacheTo',
    'mode',
  ])
    t.true(SHAPE.includes(sub), sub);
});

const shapeFailures: [string, unknown][] = [
  ['array body', []],
  ['string body', 'https://h/x'],
  ['null body', null],
  ['number body', 42],
  ['empty object', {}],
  ['missing repository', { branch: 'main', ...REG }],
  ['empty repository', { repository: '', ...REG }],
  ['numeric repository', { repository: 5, ...REG }],
  ['empty branch', { repository: REPO, branch: '', ...REG }],
  ['numeric branch', { repository: REPO, branch: 1, ...REG }],
  ['image as string', { repository: REPO, image: 'r/x:1' }],
  ['image unknown field', { repository: REPO, image: { registry: 'r.io', nmae: 'x' } }],
  ['image.name empty', { repository: REPO, image: { registry: 'r.io', name: '' } }],
  ['image.name upper case', { repository: REPO, image: { registry: 'r.io', name: 'App' } }],
  ['image.name with CRLF', { repository: REPO, image: { registry: 'r.io', name: 'app\r\nx' } }],
  ['image.tag with colon', { repository: REPO, image: { registry: 'r.io', tag: 'a:b' } }],
  ['image.tag with LF', { repository: REPO, image: { registry: 'r.io', tag: 'v1\n' } }],
  ['image.registry with scheme', { repository: REPO, image: { registry: 'https://r.io' } }],
  ['image.registry with CRLF', { repository: REPO, image: { registry: 'r.io\r\n' } }],
  ['gitCredentials without token', { repository: REPO, ...REG, gitCredentials: { username: 'u' } }],
  ['gitCredentials without username', { repository: REPO, ...REG, gitCredentials: { token: 't' } }],
  ['gitCredentials empty token', { repository: REPO, ...REG, gitCredentials: { username: 'u', token: '' } }],
  [
    'gitCredentials token with LF',
    { repository: REPO, ...REG, gitCredentials: { username: 'u', token: 't\nx' } },
  ],
  [
    'gitCredentials username with CR',
    { repository: REPO, ...REG, gitCredentials: { username: 'u\r', token: 't' } },
  ],
  [
    'gitCredentials username with colon',
    { repository: REPO, ...REG, gitCredentials: { username: 'u:p', token: 't' } },
  ],
  [
    'registryCredentials without password',
    { repository: REPO, ...REG, registryCredentials: { registry: 'r.io', username: 'u' } },
  ],
  [
    'registryCredentials without registry',
    { repository: REPO, ...REG, registryCredentials: { username: 'u', password: 'p' } },
  ],
  [
    'registryCredentials password with CRLF',
    { repository: REPO, ...REG, registryCredentials: { registry: 'r.io', username: 'u', password: 'p\r\n' } },
  ],
  ['platforms not an array', { repository: REPO, ...REG, platforms: 'linux/amd64' }],
  ['platform without arch', { repository: REPO, ...REG, platforms: ['linux'] }],
  ['empty platform', { repository: REPO, ...REG, platforms: [''] }],
  ['platform upper case', { repository: REPO, ...REG, platforms: ['Linux/amd64'] }],
  ['platform with LF', { repository: REPO, ...REG, platforms: ['linux/amd64\n'] }],
  ['buildOptions not an object', { repository: REPO, ...REG, buildOptions: 'nocache' }],
  ['buildOptions unknown field', { repository: REPO, ...REG, buildOptions: { nocache: true } }],
  ['noCache not boolean', { repository: REPO, ...REG, buildOptions: { noCache: 'true' } }],
  ['mode outside enum', { repository: REPO, ...REG, buildOptions: { mode: 'always' } }],
  ['empty cacheFrom', { repository: REPO, ...REG, buildOptions: { cacheFrom: '' } }],
  ['cacheTo with LF', { repository: REPO, ...REG, buildOptions: { cacheTo: 'type=registry,ref=r/x\n' } }],
  [
    'cacheTo with quotes',
    { repository: REPO, ...REG, buildOptions: { cacheTo: '"type=local",dest=/tmp/x' } },
  ],
  [
    'cacheFrom with two types',
    { repository: REPO, ...REG, buildOptions: { cacheFrom: 'type=registry,type=local' } },
  ],
];

for (const [why, body] of shapeFailures) {
  test(`400 shape check: ${why}`, (t) => {
    const err = refusal(t, body);
    t.is(err.code, 'INVALID_FIELDS');
    t.is(err.message, SHAPE);
  });
}

// The contract's error table (400 rows other than the shape check), with exact texts.
const table: { why: string; body: unknown; cfg?: ConfigOverrides; code: ErrorCode; message: string }[] = [
  {
    why: 'unparseable URL',
    body: { repository: 'not-a-url', ...REG },
    code: 'INVALID_REPOSITORY_URL',
    message: 'unable to parse git repository URL: not-a-url',
  },
  {
    why: 'file:// scheme',
    body: { repository: 'file:///etc', ...REG },
    code: 'SCHEME_NOT_ALLOWED',
    message:
      'repository URL scheme "file://" is not allowed: use https://, ssh:// or SCP-style (user@host:path) (git:// and http:// need insecure git protocols allowed)',
  },
  {
    why: 'http:// without insecure protocols',
    body: { repository: 'http://h/x.git', ...REG },
    code: 'SCHEME_NOT_ALLOWED',
    message:
      'repository URL scheme "http://" is not allowed: use https://, ssh:// or SCP-style (user@host:path) (git:// and http:// need insecure git protocols allowed)',
  },
  {
    why: 'credentials in URL',
    body: { repository: 'https://user:tok@host/x', ...REG },
    code: 'CREDENTIALS_IN_URL',
    message: 'repository URL must not contain credentials: pass them in gitCredentials (username and token)',
  },
  {
    why: 'cacheTo type',
    body: { repository: REPO, ...REG, buildOptions: { cacheTo: 'type=local,dest=/tmp/c' } },
    code: 'CACHE_TYPE_NOT_ALLOWED',
    message: 'buildOptions.cacheTo: cache type "local" is not allowed (allowed: registry, gha, inline)',
  },
  {
    why: 'cacheFrom type',
    body: { repository: REPO, ...REG, buildOptions: { cacheFrom: 'type=s3,bucket=b' } },
    code: 'CACHE_TYPE_NOT_ALLOWED',
    message: 'buildOptions.cacheFrom: cache type "s3" is not allowed (allowed: registry, gha, inline)',
  },
  {
    why: 'server default cacheTo of a refused type',
    body: { repository: REPO, ...REG },
    cfg: { build: { ...config().build, cacheTo: 'type=local,dest=/x' } },
    code: 'CACHE_TYPE_NOT_ALLOWED',
    message: 'buildOptions.cacheTo: cache type "local" is not allowed (allowed: registry, gha, inline)',
  },
  {
    why: 'image name underivable',
    body: { repository: 'https://h/org/.git', ...REG },
    code: 'IMAGE_NAME_UNDERIVABLE',
    message: 'unable to derive an image name from repository path org/.git: provide image.name',
  },
  {
    why: 'no registry',
    body: { repository: REPO },
    code: 'NO_REGISTRY',
    message: `no registry resolved for repository ${REPO}: provide image.registry or configure a matching registry mapping rule`,
  },
  {
    why: 'no registry: rules that do not match',
    body: { repository: REPO },
    cfg: { registryMappingRules: [{ registry: 'r.io', hostMatch: 'other.example.com' }] },
    code: 'NO_REGISTRY',
    message: `no registry resolved for repository ${REPO}: provide image.registry or configure a matching registry mapping rule`,
  },
  {
    why: 'pinned, ssh entry without pinnedHostKey',
    body: { repository: 'ssh://git@h.example:2222/x.git', ...REG },
    cfg: {
      sshHostKeyPolicy: 'pinned',
      gitCredentials: [{ host: 'h.example', kind: 'ssh', privateKey: 'KEY' }],
    },
    code: 'HOST_KEY_NOT_PINNED',
    message: 'SSH host key policy is "pinned" but no pinned key configured for host h.example:2222',
  },
  {
    why: 'pinned, no ssh credential at all (SCP-style)',
    body: { repository: 'git@h.example:org/x.git', ...REG },
    cfg: {
      sshHostKeyPolicy: 'pinned',
      gitCredentials: [{ host: 'h.example', kind: 'https', username: 'u', token: 't' }],
    },
    code: 'HOST_KEY_NOT_PINNED',
    message: 'SSH host key policy is "pinned" but no pinned key configured for host h.example',
  },
  {
    why: 'pinned, the pinned entry is for another port',
    body: { repository: 'ssh://h.example:2222/x.git', ...REG },
    cfg: {
      sshHostKeyPolicy: 'pinned',
      gitCredentials: [
        { host: 'h.example', port: 22, kind: 'ssh', privateKey: 'K', pinnedHostKey: 'ssh-ed25519 AAAA' },
      ],
    },
    code: 'HOST_KEY_NOT_PINNED',
    message: 'SSH host key policy is "pinned" but no pinned key configured for host h.example:2222',
  },
  {
    why: 'branch starting with -',
    body: { repository: REPO, ...REG, branch: '--upload-pack=x' },
    code: 'INVALID_BRANCH',
    message:
      'invalid branch "--upload-pack=x": must be a valid git branch or tag name (git check-ref-format) not starting with "-"',
  },
  {
    why: 'branch not a ref name',
    body: { repository: REPO, ...REG, branch: 'a..b' },
    code: 'INVALID_BRANCH',
    message:
      'invalid branch "a..b": must be a valid git branch or tag name (git check-ref-format) not starting with "-"',
  },
  {
    why: 'branch with CRLF',
    body: { repository: REPO, ...REG, branch: 'main\r\nx' },
    code: 'INVALID_BRANCH',
    message:
      'invalid branch "main\\r\\nx": must be a valid git branch or tag name (git check-ref-format) not starting with "-"',
  },
];

for (const row of table) {
  test(`400 ${row.code}: ${row.why}`, (t) => {
    const err = refusal(t, row.body, config(row.cfg));
    t.is(err.code, row.code);
    t.is(err.message, row.message);
  });
}

// Hostile inputs: all refused before anything runs.
const hostile: [string, unknown, ErrorCode][] = [
  ['ext:: transport', { repository: 'ext::sh -c touch% /tmp/canary', ...REG }, 'INVALID_REPOSITORY_URL'],
  [
    'ssh host as option',
    { repository: 'ssh://-oProxyCommand=touch /tmp/canary/x', ...REG },
    'INVALID_REPOSITORY_URL',
  ],
  [
    'repository as option',
    { repository: '--upload-pack=touch /tmp/canary', ...REG },
    'INVALID_REPOSITORY_URL',
  ],
  ['file://', { repository: 'file:///etc', ...REG }, 'SCHEME_NOT_ALLOWED'],
  ['credentials', { repository: 'https://user:tok@host/x', ...REG }, 'CREDENTIALS_IN_URL'],
  ['CRLF in repository', { repository: `${REPO}\r\n`, ...REG }, 'INVALID_REPOSITORY_URL'],
  ['LF in repository', { repository: 'https://h/x\n--upload-pack=y', ...REG }, 'INVALID_REPOSITORY_URL'],
  ['branch as option', { repository: REPO, ...REG, branch: '--upload-pack=x' }, 'INVALID_BRANCH'],
  ['LF in branch', { repository: REPO, ...REG, branch: 'main\n' }, 'INVALID_BRANCH'],
  ['CRLF in image.name', { repository: REPO, image: { registry: 'r.io', name: 'a\r\n' } }, 'INVALID_FIELDS'],
  ['CRLF in image.tag', { repository: REPO, image: { registry: 'r.io', tag: 'a\r\n' } }, 'INVALID_FIELDS'],
  ['CRLF in image.registry', { repository: REPO, image: { registry: 'r.io\r\n' } }, 'INVALID_FIELDS'],
  [
    'CRLF in token',
    { repository: REPO, ...REG, gitCredentials: { username: 'u', token: 'a\r\nb' } },
    'INVALID_FIELDS',
  ],
  [
    'CRLF in username',
    { repository: REPO, ...REG, gitCredentials: { username: 'u\r\n', token: 't' } },
    'INVALID_FIELDS',
  ],
  [
    'CRLF in registry username',
    { repository: REPO, ...REG, registryCredentials: { registry: 'r.io', username: 'u\r\n', password: 'p' } },
    'INVALID_FIELDS',
  ],
  ['CRLF in platforms', { repository: REPO, ...REG, platforms: ['linux/amd64\r\n'] }, 'INVALID_FIELDS'],
  [
    'CRLF in cacheFrom',
    { repository: REPO, ...REG, buildOptions: { cacheFrom: 'r/x\r\n' } },
    'INVALID_FIELDS',
  ],
  ['NUL in mode', { repository: REPO, ...REG, buildOptions: { mode: 'auto\u0000' } }, 'INVALID_FIELDS'],
];

for (const [why, body, code] of hostile) {
  test(`hostile input refused: ${why}`, (t) => {
    t.is(refusal(t, body, config({ git: { allowInsecureProtocols: true } })).code, code);
  });
}

test('a minimal request: derived name, no tag, config defaults, unknown top-level fields ignored', (t) => {
  const plan = planBuild({ repository: REPO, ...REG, whatever: { nested: [1] }, branch: null }, config());
  t.deepEqual(plan, {
    repository: REPO,
    url: { scheme: 'https', scpStyle: false, host: 'git.example.com', path: 'org/app.git', cloneUrl: REPO },
    image: { registry: 'registry.example.com', name: 'app' },
    platforms: [],
    noCache: false,
    mode: 'auto',
    compression: 'gzip',
    buildSecrets: [],
    secrets: [],
    // No credential of its own: another replica may plan it again (docs/queue.md).
    request: { repository: REPO, ...REG },
  });
});

test('image null, registry from the first matching mapping rule', (t) => {
  const cfg = config({
    registryMappingRules: [
      { registry: 'wrong.io', hostMatch: 'other.example.com' },
      { registry: 'team.io/apps', hostMatch: 'GIT.example.com', pathPrefix: 'org' },
      { registry: 'fallback.io' },
    ],
  });
  t.is(planBuild({ repository: REPO, image: null }, cfg).image.registry, 'team.io/apps');
  t.is(
    planBuild({ repository: 'https://git.example.com/else/app', image: null }, cfg).image.registry,
    'fallback.io',
  );
  t.is(planBuild({ repository: REPO, image: { registry: 'mine.io' } }, cfg).image.registry, 'mine.io');
});

test('request values override server defaults; empty platforms mean the server default', (t) => {
  const cfg = config({
    build: {
      ...config().build,
      platforms: ['linux/amd64'],
      noCache: true,
      cacheFrom: 'r.io/cache:from',
      cacheTo: 'type=inline',
      mode: 'never',
    },
  });
  const defaults = planBuild({ repository: REPO, ...REG, platforms: [] }, cfg);
  t.deepEqual(defaults.platforms, ['linux/amd64']);
  t.is(defaults.noCache, true);
  t.is(defaults.cacheFrom, 'type=registry,ref=r.io/cache:from');
  t.is(defaults.cacheTo, 'type=inline');
  t.is(defaults.mode, 'never');

  const own = planBuild(
    {
      repository: REPO,
      image: { registry: 'r.io', name: 'team/app', tag: 'v1' },
      branch: 'release/1.0',
      platforms: ['linux/386', 'linux/arm64/v8', 'linux/386'],
      buildOptions: { noCache: false, cacheFrom: 'type=gha', cacheTo: 'r.io/c:x', mode: 'auto' },
    },
    cfg,
  );
  t.deepEqual(own.platforms, ['linux/386', 'linux/arm64/v8']);
  t.is(own.noCache, false);
  t.is(own.cacheFrom, 'type=gha');
  t.is(own.cacheTo, 'type=registry,ref=r.io/c:x');
  t.is(own.mode, 'auto');
  t.is(own.branch, 'release/1.0');
  t.deepEqual(own.image, { registry: 'r.io', name: 'team/app', tag: 'v1' });
});

const SERVER_CREDS: Config['gitCredentials'] = [
  { host: 'git.example.com', kind: 'https', username: 'srv', token: 'server-token' },
  { host: 'git.example.com', port: 8443, kind: 'https', username: 'srv8443', token: 'port-token' },
  { host: 'git.example.com', kind: 'ssh', privateKey: 'SSH-KEY-A' },
  {
    host: 'git.example.com',
    port: 2222,
    kind: 'ssh',
    privateKey: 'SSH-KEY-B',
    pinnedHostKey: 'ssh-ed25519 AAAAB',
  },
];

test('git credentials: request for https, else the server entry by host, port and kind', (t) => {
  const cfg = config({ gitCredentials: SERVER_CREDS, git: { allowInsecureProtocols: true } });
  const req = planBuild(
    { repository: REPO, ...REG, gitCredentials: { username: 'me', token: 'req-token' } },
    cfg,
  );
  t.deepEqual(req.gitCredential, { kind: 'https', username: 'me', token: 'req-token' });
  t.deepEqual(req.secrets, ['req-token']);

  t.deepEqual(planBuild({ repository: REPO, ...REG }, cfg).gitCredential, {
    kind: 'https',
    username: 'srv',
    token: 'server-token',
  });
  t.is(
    planBuild({ repository: 'https://GIT.example.com:8443/o/a', ...REG }, cfg).gitCredential?.kind,
    'https',
  );
  t.deepEqual(planBuild({ repository: 'https://git.example.com:8443/o/a', ...REG }, cfg).secrets, [
    'port-token',
  ]);
  t.deepEqual(planBuild({ repository: 'https://git.example.com:443/o/a', ...REG }, cfg).secrets, [
    'server-token',
  ]);
  t.deepEqual(planBuild({ repository: 'http://git.example.com/o/a', ...REG }, cfg).secrets, ['server-token']);
  t.is(planBuild({ repository: 'https://other.example.com/o/a', ...REG }, cfg).gitCredential, undefined);
  t.is(planBuild({ repository: 'git://git.example.com/o/a', ...REG }, cfg).gitCredential, undefined);

  const scp = planBuild({ repository: 'git@git.example.com:o/a.git', ...REG }, cfg);
  t.deepEqual(scp.gitCredential, { kind: 'ssh', privateKey: 'SSH-KEY-A' });
  t.deepEqual(scp.secrets, ['SSH-KEY-A']);
  // Under tofu the pin is not used; the port-specific entry wins over the generic one.
  t.deepEqual(planBuild({ repository: 'ssh://git@git.example.com:2222/o/a', ...REG }, cfg).gitCredential, {
    kind: 'ssh',
    privateKey: 'SSH-KEY-B',
  });
  // Request gitCredentials do not apply to ssh, but are still masked.
  const sshWithReq = planBuild(
    { repository: 'ssh://git.example.com/o/a', ...REG, gitCredentials: { username: 'u', token: 'tok-x' } },
    cfg,
  );
  t.is(sshWithReq.gitCredential?.kind, 'ssh');
  t.deepEqual(sshWithReq.secrets.sort(), ['SSH-KEY-A', 'tok-x']);
  // tofu: an ssh URL without any credential is fine (ssh may still authenticate otherwise).
  t.is(planBuild({ repository: 'ssh://h.example/o/a', ...REG }, config()).gitCredential, undefined);
});

test('pinned: the pinned key becomes a known_hosts line for the host ssh names', (t) => {
  const cfg = config({ gitCredentials: SERVER_CREDS, sshHostKeyPolicy: 'pinned' });
  t.deepEqual(planBuild({ repository: 'ssh://git@git.example.com:2222/o/a', ...REG }, cfg).gitCredential, {
    kind: 'ssh',
    privateKey: 'SSH-KEY-B',
    pinnedHostKey: '[git.example.com]:2222 ssh-ed25519 AAAAB',
  });
  const withHost = config({
    sshHostKeyPolicy: 'pinned',
    gitCredentials: [
      {
        host: '127.0.0.1',
        kind: 'ssh',
        privateKey: 'K',
        pinnedHostKey: '[127.0.0.1]:40000 ssh-ed25519 AAAAC\n127.0.0.1 ecdsa-sha2-nistp256 AAAAE\n',
      },
    ],
  });
  t.deepEqual(
    planBuild({ repository: 'ssh://root@127.0.0.1:40000/srv/x.git', ...REG }, withHost).gitCredential,
    {
      kind: 'ssh',
      privateKey: 'K',
      pinnedHostKey: '[127.0.0.1]:40000 ssh-ed25519 AAAAC\n[127.0.0.1]:40000 ecdsa-sha2-nistp256 AAAAE',
    },
  );
  const commented = config({
    sshHostKeyPolicy: 'pinned',
    gitCredentials: [
      {
        host: 'h.example',
        kind: 'ssh',
        privateKey: 'K',
        pinnedHostKey: 'other ssh-ed25519 AAAAC root@h now',
      },
    ],
  });
  t.deepEqual(planBuild({ repository: 'ssh://h.example/x.git', ...REG }, commented).gitCredential, {
    kind: 'ssh',
    privateKey: 'K',
    pinnedHostKey: 'h.example ssh-ed25519 AAAAC root@h now',
  });
  // https is not concerned by the ssh policy.
  t.is(planBuild({ repository: REPO, ...REG }, cfg).gitCredential?.kind, 'https');
});

test('registry credentials pass through and their password is a secret', (t) => {
  const plan = planBuild(
    {
      repository: REPO,
      ...REG,
      registryCredentials: { registry: 'registry.example.com', username: 'u', password: 'pw-1' },
    },
    config(),
  );
  t.deepEqual(plan.registryCredentials, {
    registry: 'registry.example.com',
    username: 'u',
    password: 'pw-1',
  });
  t.deepEqual(plan.secrets, ['pw-1']);
});

test('SCP-style and ssh URLs derive the image name from the last path segment', (t) => {
  t.is(
    planBuild({ repository: 'git@github.com:Org/Some.Project.git', ...REG }, config()).image.name,
    'some.project',
  );
  t.is(
    planBuild({ repository: 'ssh://root@127.0.0.1:2222/srv/git/image.git', ...REG }, config()).image.name,
    'image',
  );
});
