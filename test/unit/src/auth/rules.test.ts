// Which rule grants an action (docs/auth.md), table-driven over the pure matcher: claims bound into
// paths and names, globs, the host and registry comparisons, and every claim that makes a rule not
// apply rather than match wider.
import test from 'ava';
import type { AuthRule } from '../../../../src/config/types.js';
import { expand, grantingRule, type Resources } from '../../../../src/auth/rules.js';
import type { Identity } from '../../../../src/auth/identity.js';

const ci = (claims: Record<string, unknown>): Identity => ({
  requestedBy: { kind: 'oidc', subject: String(claims.sub ?? 'sub'), name: 'github' },
  issuerName: 'github',
  claims,
});
const ops: Identity = {
  requestedBy: { kind: 'token', subject: 'ops', name: 'ops' },
  tokenName: 'ops',
  claims: {},
};

const RULES: AuthRule[] = [
  {
    name: 'own',
    issuer: 'github',
    claims: { repository_owner: 'example' },
    actions: ['build', 'read', 'cancel'],
    repositories: [{ host: 'GitHub.com', path: '{repository}' }],
    images: [{ registry: 'ghcr.io', name: 'example/{repository_name}' }],
  },
  {
    name: 'ops',
    token: 'ops',
    actions: ['delete', 'admin', 'read'],
    repositories: [{ host: '*', path: '**' }],
    images: [{ registry: '*', name: '**' }],
  },
];

const app = { repository: 'example/app', repository_owner: 'example', repository_name: 'app' };
const repo = (path: string, host = 'github.com') => ({ host, path });
const build = (path: string, image: string, registry = 'ghcr.io'): Resources => ({
  repository: repo(path),
  image: { registry, name: image },
});

const cases: [string, Identity, AuthRule['actions'][number], Resources, string | undefined][] = [
  ['its own repository into its image', ci(app), 'build', build('example/app', 'example/app'), 'own'],
  ['host compared without case', ci(app), 'build', { repository: repo('example/app', 'github.com') }, 'own'],
  ['another repository', ci(app), 'build', build('example/other', 'example/app'), undefined],
  ['an image outside its rule', ci(app), 'build', build('example/app', 'example/other'), undefined],
  ['another registry', ci(app), 'build', build('example/app', 'example/app', 'docker.io'), undefined],
  ['another host', ci(app), 'build', { repository: repo('example/app', 'gitlab.com') }, undefined],
  ['an action the rule lacks', ci(app), 'delete', build('example/app', 'example/app'), undefined],
  [
    'a claim of the rule differing',
    ci({ ...app, repository_owner: 'evil' }),
    'read',
    { repository: repo('example/app') },
    undefined,
  ],
  [
    'a missing claim',
    ci({ repository_owner: 'example', repository_name: 'app' }),
    'read',
    { repository: repo('example/app') },
    undefined,
  ],
  [
    'a claim that is no string',
    ci({ ...app, repository: 42 }),
    'read',
    { repository: repo('42') },
    undefined,
  ],
  [
    'a claim holding a glob',
    ci({ ...app, repository: 'example/*' }),
    'read',
    { repository: repo('example/app') },
    undefined,
  ],
  [
    'a claim holding ..',
    ci({ ...app, repository: 'example/../x' }),
    'read',
    { repository: repo('example/../x') },
    undefined,
  ],
  ['a static token: its rule only', ops, 'admin', {}, 'ops'],
  ['a static token on any repository', ops, 'read', { repository: repo('a/b/c', 'git.example') }, 'ops'],
  [
    'a log of no known repository: every-repository rules only',
    ops,
    'read',
    { repository: 'anyRepository' },
    'ops',
  ],
  [
    'an ID token and a log of no known repository',
    ci(app),
    'read',
    { repository: 'anyRepository' },
    undefined,
  ],
  ['an ID token is no static token', ci(app), 'admin', {}, undefined],
];

for (const [what, identity, action, resources, expected] of cases) {
  test(`${what}: ${expected ?? 'denied'}`, (t) => {
    t.is(grantingRule(RULES, identity, action, resources)?.name, expected);
  });
}

test('a placeholder takes the claim as text, never as a glob', (t) => {
  t.is(expand('org/{repository}', { repository: 'org/app' }), 'org/org/app');
  t.is(expand('{a}-{b}', { a: 'x', b: 'y.z' }), 'x-y.z');
  t.is(expand('{a}', { a: 'x y' }), undefined);
  t.is(expand('{a}', { a: '**' }), undefined);
  t.is(expand('{constructor}', {}), undefined);
});

test("a rule's claim matches a list claim that holds its value (a person's groups), never a list without it", (t) => {
  const people: AuthRule = {
    name: 'platform-team',
    issuer: 'github',
    claims: { groups: 'platform-team' },
    actions: ['read'],
    repositories: [{ host: '*', path: 'platform/**' }],
    images: [],
  };
  const resources = { repository: repo('platform/app') };
  const person = (groups: unknown): Identity => ci({ sub: 'alice', groups });
  t.is(grantingRule([people], person(['staff', 'platform-team']), 'read', resources)?.name, 'platform-team');
  t.is(grantingRule([people], person('platform-team'), 'read', resources)?.name, 'platform-team');
  t.is(grantingRule([people], person(['staff']), 'read', resources), undefined);
  t.is(grantingRule([people], person([]), 'read', resources), undefined);
  t.is(grantingRule([people], person(['platform-team-2']), 'read', resources), undefined);
  // A list claim never stands in a pattern: the rule does not apply.
  t.is(expand('{groups}/**', { groups: ['platform'] }), undefined);
});
