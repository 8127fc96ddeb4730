// The caller identity settings refused at startup (docs/auth.md), each problem named and never a
// token's digest; and a valid section loaded as written, from the settings file or its own files.
import test from 'ava';
import { stringify } from 'yaml';
import { loadConfig } from '../../../../src/config/load.js';
import { configScratch } from '../../../helpers/config-scratch.js';

const scratch = configScratch('ibs-auth-config-');
const DIGEST = 'c0ffee'.repeat(10) + 'c0ff';
const ISSUER = { name: 'github', issuer: 'https://token.actions.githubusercontent.com', audience: 'ibs' };
const TOKEN = { name: 'ops', sha256: DIGEST };
const RULE = {
  name: 'ops',
  token: 'ops',
  actions: ['admin'],
};

const BROWSER = {
  issuer: 'github',
  clientId: 'ibs-pages',
  redirectUrl: 'https://builds.example.com/auth/callback',
};

const problemsOfAuth = (auth: Record<string, unknown>): string[] =>
  scratch.problemsOf(['--settings', scratch.file('.yaml', stringify({ auth }))]);

const cases: Record<string, { auth: Record<string, unknown>; problem: RegExp }> = {
  'an http issuer': {
    auth: { mode: 'enforce', issuers: [{ ...ISSUER, issuer: 'http://issuer.example' }] },
    problem: /auth\.issuers\[0\]\.issuer.*https/,
  },
  'a rule naming an unknown issuer': {
    auth: { mode: 'enforce', tokens: [TOKEN], rules: [{ ...RULE, token: undefined, issuer: 'gitlab' }] },
    problem: /auth rule "ops": unknown issuer "gitlab"/,
  },
  'a rule naming an unknown token': {
    auth: { mode: 'enforce', issuers: [ISSUER], rules: [RULE] },
    problem: /auth rule "ops": unknown token "ops"/,
  },
  'an unknown action': {
    auth: { mode: 'enforce', tokens: [TOKEN], rules: [{ ...RULE, actions: ['push'] }] },
    problem: /auth\.rules\[0\]\.actions\[0\]/,
  },
  'a digest that is not 64 hex digits': {
    auth: { mode: 'enforce', tokens: [{ name: 'ops', sha256: `${DIGEST}00` }] },
    problem: /auth\.tokens\[0\]\.sha256/,
  },
  'enforce with no issuer and no token': {
    auth: { mode: 'enforce' },
    problem: /auth\.mode is enforce but no issuer and no token/,
  },
  'two issuers of one name': {
    auth: { mode: 'enforce', issuers: [ISSUER, { ...ISSUER, audience: 'other' }] },
    problem: /auth\.issuers\[1\]: name "github" is already/,
  },
  'two tokens of one name': {
    auth: { mode: 'enforce', tokens: [TOKEN, { name: 'ops', sha256: 'ab'.repeat(32) }] },
    problem: /auth\.tokens\[1\]: name "ops" is already/,
  },
  'a rule with both an issuer and a token': {
    auth: { mode: 'enforce', issuers: [ISSUER], tokens: [TOKEN], rules: [{ ...RULE, issuer: 'github' }] },
    problem: /auth\.rules\[0\]/,
  },
  "people's sign-in naming an unknown issuer": {
    auth: { mode: 'enforce', issuers: [ISSUER], browser: { ...BROWSER, issuer: 'okta' } },
    problem: /auth\.browser\.issuer: unknown issuer "okta"/,
  },
  "people's sign-in without a client id": {
    auth: { mode: 'enforce', issuers: [ISSUER], browser: { ...BROWSER, clientId: undefined } },
    problem: /auth\.browser\.clientId is required/,
  },
  "people's sign-in without its redirect URL": {
    auth: { mode: 'enforce', issuers: [ISSUER], browser: { ...BROWSER, redirectUrl: undefined } },
    problem: /auth\.browser\.redirectUrl is required/,
  },
  "people's sign-in coming back over plain http to a host that is not loopback": {
    auth: {
      mode: 'enforce',
      issuers: [ISSUER],
      browser: { ...BROWSER, redirectUrl: 'http://builds.example.com/auth/callback' },
    },
    problem: /auth\.browser\.redirectUrl must be https/,
  },
  "people's sign-in coming back elsewhere than /auth/callback": {
    auth: {
      mode: 'enforce',
      issuers: [ISSUER],
      browser: { ...BROWSER, redirectUrl: 'https://builds.example.com/callback' },
    },
    problem: /auth\.browser\.redirectUrl/,
  },
  "people's sign-in without the openid scope": {
    auth: { mode: 'enforce', issuers: [ISSUER], browser: { ...BROWSER, scopes: ['email'] } },
    problem: /auth\.browser\.scopes must include openid/,
  },
  "people's sign-in with identities off": {
    auth: { mode: 'off', issuers: [ISSUER], browser: BROWSER },
    problem: /auth\.browser needs auth\.mode enforce/,
  },
  "a client id without people's sign-in": {
    auth: { mode: 'enforce', issuers: [ISSUER], browser: { clientId: 'ibs-pages' } },
    problem: /auth\.browser is set without auth\.browser\.issuer/,
  },
};

for (const [what, { auth, problem }] of Object.entries(cases)) {
  test(`startup refuses ${what}, never showing a digest`, (t) => {
    const problems = problemsOfAuth(auth);
    t.true(
      problems.some((p) => problem.test(p)),
      problems.join('\n'),
    );
    t.false(problems.join('\n').includes(DIGEST.slice(0, 16)));
  });
}

test('a valid section loads as written; the mode from AUTH_MODE, the tokens from their own file', (t) => {
  const settings = scratch.file(
    '.yaml',
    stringify({
      auth: {
        issuers: [ISSUER],
        rules: [
          {
            name: 'ci',
            issuer: 'github',
            claims: { repository_owner: 'example' },
            actions: ['build', 'read'],
            repositories: [{ host: 'github.com', path: '{repository}' }],
            images: [{ registry: 'ghcr.io', name: '{repository}' }],
          },
          RULE,
        ],
      },
    }),
  );
  const tokens = scratch.file('.json', JSON.stringify([{ name: 'ops', sha256: DIGEST.toUpperCase() }]));
  const config = loadConfig({
    argv: ['--settings', settings, '--auth-tokens-path', tokens],
    env: { ...scratch.baseEnv, AUTH_MODE: 'enforce' },
  });
  t.is(config.auth.mode, 'enforce');
  t.deepEqual(config.auth.issuers, [ISSUER]);
  t.deepEqual(config.auth.tokens, [{ name: 'ops', sha256: DIGEST }]);
  t.deepEqual(
    config.auth.rules.map((r) => [r.name, r.repositories.length, r.images.length]),
    [
      ['ci', 1, 1],
      ['ops', 0, 0],
    ],
  );
});

test("people's sign-in loads as written, its client secret from the environment and never in a problem", (t) => {
  const settings = scratch.file(
    '.yaml',
    stringify({ auth: { mode: 'enforce', issuers: [ISSUER], browser: BROWSER } }),
  );
  const config = loadConfig({
    argv: ['--settings', settings],
    env: {
      HOME: scratch.dir,
      DOCKER_CONFIG: scratch.dir,
      AUTH_BROWSER_CLIENT_SECRET: 's3cret-of-the-client',
    },
  });
  t.deepEqual(config.auth.browser, { ...BROWSER, scopes: ['openid', 'email', 'profile'], sessionHours: 8 });
  t.is(config.auth.browserClientSecret, 's3cret-of-the-client');
  const refused = scratch.problemsOf(['--settings', settings, '--auth-browser-session-hours', '0'], {
    AUTH_BROWSER_CLIENT_SECRET: 's3cret-of-the-client',
  });
  t.true(refused.some((p) => p.includes('--auth-browser-session-hours')));
  t.false(refused.join('\n').includes('s3cret'));
});
