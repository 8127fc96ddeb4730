// `ibs` (its own process) tells the service who calls: IBS_TOKEN, or in GitHub Actions an ID token
// it asks the runner's token endpoint for, goes as `Authorization: Bearer` on every request (build,
// watch, polls, log follows, cancel, the thin commands) and to no other host; a 401 or 403 exits 2
// with the service's reason and is never sent again; no token ever shows in what ibs prints or
// writes to GITHUB_OUTPUT, even from a service that echoes it back. The service is a small fake of
// its HTTP API on port 0, the runner's endpoint a fake of its own (test/helpers).
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http, { type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { actionsTokenUrl, expiryOf } from '../../../../src/client/identity.js';
import { actionsTokenEndpoint } from '../../../helpers/actions-token-endpoint.js';
import { eventually } from '../../../helpers/eventually.js';
import { runIbs, type IbsProcess } from '../../../helpers/ibs-process.js';

const ID = 'bld-00000000-0000-4000-8000-000000000002';
const CLONE_LOG = 'git-00000000-0000-4000-8000-000000000003';
const BUILD_LOG = 'bld-00000000-0000-4000-8000-000000000004';
const AUDIENCE = 'https://ibs.example/ci audience';

const base64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
/** A JWT's shape (ibs reads only `exp`; the service verifies, not ibs), unique per call. */
const jwt = (claims: Record<string, unknown> = {}): string =>
  [
    base64url({ alg: 'RS256', typ: 'JWT', kid: 'k1' }),
    base64url({
      iss: 'https://issuer.example',
      aud: AUDIENCE,
      exp: Math.floor(Date.now() / 1000) + 3600,
      ...claims,
    }),
    randomBytes(64).toString('base64url'),
  ].join('.');
const staticToken = (): string => `ibs-static-${randomBytes(24).toString('hex')}`;

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly authorization: string | undefined;
}

interface Reply {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Record<string, string>;
}

interface FakeOptions {
  /** The Authorization header accepted; anything else gets the service's 401. Unset: no check. */
  readonly expect?: () => string;
  /** An answer given before the routes (a 403 of the rules). */
  readonly answer?: (seen: Seen) => Reply | undefined;
  /** A service that leaks: the caller's Authorization header in its logs, results and errors. */
  readonly echo?: boolean;
  /** Polls are never answered (the build runs until ibs is interrupted). */
  readonly holdPolls?: boolean;
}

const record = (extra: Record<string, unknown> = {}) => ({
  id: ID,
  requestId: 'job-1',
  phase: 'building',
  gitCloneLogId: CLONE_LOG,
  imageBuildLogId: BUILD_LOG,
  ...extra,
});

/** A fake of the service's API: answers each request kind ibs makes, records who asked. */
async function service(
  t: { teardown: (fn: () => void) => void },
  options: FakeOptions = {},
): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const held: (() => void)[] = [];
  const send = (res: ServerResponse, reply: Reply): void => {
    const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
    res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers }).end(text);
  };
  const logsFollowed = (): boolean =>
    [CLONE_LOG, BUILD_LOG].every((log) => seen.some((s) => s.url === `/logs/${log}?follow=true`));
  const route = (req: Seen, res: ServerResponse): void => {
    const leak = options.echo === true ? ` (caller: ${req.authorization ?? 'none'})` : '';
    const path = req.url.split('?')[0] ?? '';
    if (req.method === 'POST' && path === '/build') return send(res, { status: 202, body: record() });
    if (req.method === 'GET' && path === '/builds')
      return send(res, { status: 200, body: { builds: [record()] } });
    if (req.method === 'GET' && path === `/builds/${ID}`) {
      if (options.holdPolls === true) return void held.push(() => res.destroy());
      const result = {
        image: `r.example/app:1${leak}`,
        registry: 'r.example',
        name: 'app',
        tag: '1',
        digest: `sha256:${'b'.repeat(64)}`,
        gitCloneLogId: CLONE_LOG,
        imageBuildLogId: BUILD_LOG,
      };
      const finished = {
        status: 200,
        body: record({ phase: 'finished', answer: { status: 200, body: result } }),
      };
      // The answer once ibs has followed both logs (so each request kind is seen), else in 2 s
      // the build still running (ibs polls again).
      void eventually(logsFollowed, { timeout: 2000 })
        .then(
          () => true,
          () => false,
        )
        .then((followed) => send(res, followed ? finished : { status: 200, body: record() }));
      return;
    }
    if (req.method === 'DELETE' && path === `/builds/${ID}`)
      return send(res, { status: 200, body: record({ phase: 'finished', status: 'failure' }) });
    if (path.startsWith('/logs/')) return send(res, { status: 200, body: `a line of ${path}${leak}\n` });
    if (req.method === 'GET' && path === '/image') return send(res, { status: 200, body: { exists: true } });
    if (req.method === 'DELETE' && path === '/image')
      return send(res, { status: 200, body: { deleted: true, reason: `deleted${leak}` } });
    if (req.method === 'GET' && path === '/devcontainer')
      return send(res, { status: 200, body: { configuration: { remoteUser: `dev${leak}` } } });
    send(res, { status: 404, body: { error: 'not found' } });
  };
  const server = http.createServer((req, res) => {
    req.resume();
    req.once('end', () => {
      const request = {
        method: req.method ?? '',
        url: req.url ?? '',
        authorization: req.headers.authorization,
      };
      seen.push(request);
      const leak = options.echo === true ? ` (caller: ${request.authorization ?? 'none'})` : '';
      const expected = options.expect?.();
      if (expected !== undefined && request.authorization !== expected) {
        const challenge = `Bearer realm="image-build-service"${request.authorization === undefined ? '' : ', error="invalid_token"'}`;
        const error =
          request.authorization === undefined
            ? 'a bearer token is required (Authorization: Bearer <token>)'
            : `the bearer token is refused: unknown token${leak}`;
        return send(res, { status: 401, body: { error }, headers: { 'www-authenticate': challenge } });
      }
      const special = options.answer?.(request);
      if (special !== undefined) return send(res, special);
      route(request, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const release of held) release();
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const buildArgs = (url: string, ...more: string[]) => [
  'build',
  '--server',
  url,
  '--repository',
  'https://git.example/app.git',
  '--request-id',
  'job-1',
  ...more,
];

/** The request kinds of a build, each seen at least once. */
function kindsOf(seen: readonly Seen[]): string[] {
  const kinds = seen.map(({ method, url }) => {
    if (url.startsWith('/builds?requestId=')) return 'watch';
    if (url.startsWith(`/builds/${ID}?wait=`)) return 'poll';
    if (url.endsWith('?follow=true')) return 'log follow';
    return `${method} ${url.split('?')[0] ?? ''}`;
  });
  return [...new Set(kinds)].sort();
}

/** What ibs left for a reader: stdout, stderr and the GITHUB_OUTPUT file. */
async function everythingPrinted(ibs: IbsProcess, outputFile?: string): Promise<string> {
  const file = outputFile === undefined ? '' : await readFile(outputFile, 'utf8').catch(() => '');
  return `${ibs.stdout()}\n${ibs.stderr()}\n${file}`;
}

async function scratchFile(t: { teardown: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ibs-identity-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return join(dir, 'github-output');
}

test('the Actions request URL gets the audience URL-encoded; a JWT is read for its exp only', (t) => {
  t.is(
    actionsTokenUrl('https://runner.example/idtoken?api-version=2.0', 'a b/c').href,
    'https://runner.example/idtoken?api-version=2.0&audience=a%20b%2Fc',
  );
  t.is(
    actionsTokenUrl('https://runner.example/idtoken', 'ibs').href,
    'https://runner.example/idtoken?audience=ibs',
  );
  t.is(expiryOf(jwt({ exp: 1_900_000_000 })), 1_900_000_000_000);
  for (const garbage of ['', 'abc', 'a.b.c', `x.${base64url({ exp: 'soon' })}.y`])
    t.is(expiryOf(garbage), undefined);
});

test('IBS_TOKEN goes as the bearer token on every request of a build', async (t) => {
  const token = staticToken();
  const { url, seen } = await service(t, { expect: () => `Bearer ${token}` });
  const ibs = runIbs(buildArgs(url), { IBS_TOKEN: token });
  t.is(await ibs.exited, 0, ibs.stderr());
  t.is(JSON.parse(ibs.stdout()).digest, `sha256:${'b'.repeat(64)}`);
  t.deepEqual(kindsOf(seen), ['POST /build', 'log follow', 'poll', 'watch']);
  for (const request of seen) t.is(request.authorization, `Bearer ${token}`, request.url);
  t.regex(ibs.stderr(), new RegExp(`\\[build\\] a line of /logs/${BUILD_LOG}`));
});

test('the cancel of an interrupted build carries the token too', async (t) => {
  const token = staticToken();
  const { url, seen } = await service(t, { expect: () => `Bearer ${token}`, holdPolls: true });
  const ibs = runIbs(buildArgs(url), { IBS_TOKEN: token });
  await ibs.stderrAt(`==> accepted: build ${ID}`);
  await eventually(() => seen.some((s) => s.url.includes('wait=')), { timeout: 30_000 });
  ibs.child.kill('SIGINT');
  t.is(await ibs.exited, 130, ibs.stderr());
  const deletes = seen.filter((s) => s.method === 'DELETE');
  t.deepEqual(
    deletes.map((s) => [s.url, s.authorization]),
    [[`/builds/${ID}`, `Bearer ${token}`]],
  );
  t.regex(ibs.stderr(), new RegExp(`^==> cancelled build ${ID}$`, 'm'));
});

test('image exists, image delete, devcontainer and logs carry the token', async (t) => {
  const token = staticToken();
  const { url, seen } = await service(t, { expect: () => `Bearer ${token}` });
  const image = ['--server', url, '--registry', 'r.example', '--name', 'app', '--tag', '1'];
  const commands = [
    ['image', 'exists', ...image],
    ['image', 'delete', ...image],
    ['devcontainer', ...image],
    ['logs', CLONE_LOG, '--server', url],
    ['logs', BUILD_LOG, '--follow', '--server', url],
  ];
  for (const args of commands) {
    const ibs = runIbs(args, { IBS_TOKEN: token });
    t.is(await ibs.exited, 0, `${args.join(' ')}: ${ibs.stderr()}`);
  }
  t.deepEqual(
    seen.map((s) => `${s.method} ${s.url.split('?')[0] ?? ''}`),
    ['GET /image', 'DELETE /image', 'GET /devcontainer', `GET /logs/${CLONE_LOG}`, `GET /logs/${BUILD_LOG}`],
  );
  for (const request of seen) t.is(request.authorization, `Bearer ${token}`, request.url);
});

test('in GitHub Actions ibs asks the runner for an ID token of IBS_OIDC_AUDIENCE and sends it', async (t) => {
  const endpoint = await actionsTokenEndpoint(() => jwt({ sub: 'repo:example/app:ref:refs/heads/main' }));
  t.teardown(() => endpoint.close());
  const { url, seen } = await service(t, { expect: () => `Bearer ${endpoint.minted.at(-1) ?? 'none'}` });
  const ibs = runIbs(buildArgs(url), { ...endpoint.env, IBS_OIDC_AUDIENCE: AUDIENCE });
  t.is(await ibs.exited, 0, ibs.stderr());

  t.is(endpoint.requests.length, 1, 'one ID token serves the whole build');
  const [asked] = endpoint.requests;
  t.is(asked?.url, `/idtoken?api-version=2.0&audience=${encodeURIComponent(AUDIENCE)}`);
  t.is(asked?.audience, AUDIENCE);
  t.is(asked?.headers.authorization, `bearer ${endpoint.env.ACTIONS_ID_TOKEN_REQUEST_TOKEN}`);
  t.deepEqual(kindsOf(seen), ['POST /build', 'log follow', 'poll', 'watch']);
  for (const request of seen) t.is(request.authorization, `Bearer ${endpoint.minted[0] ?? ''}`, request.url);
});

test('a request URL without a query gets "?audience="; IBS_TOKEN (trimmed, header-safe) wins over Actions', async (t) => {
  const endpoint = await actionsTokenEndpoint(() => jwt(), { path: '/token' });
  t.teardown(() => endpoint.close());
  const { url, seen } = await service(t);
  const image = ['image', 'exists', '--server', url, '--registry', 'r', '--name', 'n', '--tag', 't'];
  const actions = runIbs(image, { ...endpoint.env, IBS_OIDC_AUDIENCE: 'ibs' });
  t.is(await actions.exited, 0, actions.stderr());
  t.deepEqual(
    endpoint.requests.map((r) => r.url),
    ['/token?audience=ibs'],
  );

  const token = staticToken();
  const both = runIbs(image, { ...endpoint.env, IBS_OIDC_AUDIENCE: 'ibs', IBS_TOKEN: token });
  t.is(await both.exited, 0, both.stderr());
  t.is(endpoint.requests.length, 1, 'the runner is not asked when IBS_TOKEN is set');
  t.is(seen.at(-1)?.authorization, `Bearer ${token}`);

  const newline = runIbs(image, { IBS_TOKEN: `${token}\n` });
  t.is(await newline.exited, 0, newline.stderr());
  t.is(seen.at(-1)?.authorization, `Bearer ${token}`, 'the trailing newline of a token file is dropped');
  const inner = runIbs(image, { IBS_TOKEN: `${token} ${token}` });
  t.is(await inner.exited, 2, inner.stderr());
  t.regex(inner.stderr(), /IBS_TOKEN holds characters a header cannot carry/);
  t.false(inner.stderr().includes(token));

  const anonymous = runIbs(image, { ...endpoint.env });
  t.is(await anonymous.exited, 0, anonymous.stderr());
  t.is(endpoint.requests.length, 1, 'without IBS_OIDC_AUDIENCE no ID token is asked for');
  t.is(seen.at(-1)?.authorization, undefined);
});

test('an ID token about to expire is asked for again before it is sent', async (t) => {
  const endpoint = await actionsTokenEndpoint(() =>
    jwt({ exp: Math.floor(Date.now() / 1000) + (endpoint.minted.length === 0 ? 30 : 3600) }),
  );
  t.teardown(() => endpoint.close());
  const { url, seen } = await service(t, { expect: () => `Bearer ${endpoint.minted.at(-1) ?? 'none'}` });
  const ibs = runIbs(['image', 'exists', '--server', url, '--registry', 'r', '--name', 'n', '--tag', 't'], {
    ...endpoint.env,
    IBS_OIDC_AUDIENCE: AUDIENCE,
  });
  t.is(await ibs.exited, 0, ibs.stderr());
  t.is(endpoint.minted.length, 2);
  t.deepEqual(
    seen.map((s) => s.authorization),
    [`Bearer ${endpoint.minted[1] ?? ''}`],
  );
});

test('no ID token to be had: exit 2 with the reason, nothing sent to the service, no token printed', async (t) => {
  const { url, seen } = await service(t);
  const args = buildArgs(url);
  const cases: { name: string; env: () => Promise<Record<string, string>>; reason: RegExp }[] = [
    {
      name: 'the runner answers 500',
      env: async () => {
        const broken = await actionsTokenEndpoint(() => jwt(), {
          answer: () => ({ status: 500, body: JSON.stringify({ message: 'the runner broke' }) }),
        });
        t.teardown(() => broken.close());
        return broken.env;
      },
      reason:
        /GitHub Actions gave no ID token for audience "[^"]+": its token endpoint answered 500: the runner broke/,
    },
    {
      name: 'a wrong request token',
      env: async () => {
        const endpoint = await actionsTokenEndpoint(() => jwt());
        t.teardown(() => endpoint.close());
        return {
          ...endpoint.env,
          ACTIONS_ID_TOKEN_REQUEST_TOKEN: `stale-${randomBytes(12).toString('hex')}`,
        };
      },
      reason: /its token endpoint answered 401: bad request token/,
    },
    {
      name: 'an answer without a value',
      env: async () => {
        const empty = await actionsTokenEndpoint(() => jwt(), {
          answer: () => ({ status: 200, body: '{"count":0}' }),
        });
        t.teardown(() => empty.close());
        return empty.env;
      },
      reason: /carries no "value" ibs can send/,
    },
    {
      name: 'an endpoint that cannot be reached',
      env: async () => {
        const gone = await actionsTokenEndpoint(() => jwt());
        await gone.close();
        return gone.env;
      },
      reason: /GitHub Actions gave no ID token .*could not be reached/,
    },
    {
      name: 'no Actions variables',
      env: () => Promise.resolve({}),
      reason:
        /IBS_OIDC_AUDIENCE is set but ACTIONS_ID_TOKEN_REQUEST_URL and ACTIONS_ID_TOKEN_REQUEST_TOKEN are not.*id-token: write/,
    },
  ];
  for (const { name, env, reason } of cases) {
    const given: Record<string, string> = { ...(await env()), IBS_OIDC_AUDIENCE: AUDIENCE };
    const ibs = runIbs(args, given);
    t.is(await ibs.exited, 2, `${name}: ${ibs.stderr()}`);
    t.regex(ibs.stderr(), reason, name);
    if (given.ACTIONS_ID_TOKEN_REQUEST_TOKEN !== undefined)
      t.false((await everythingPrinted(ibs)).includes(given.ACTIONS_ID_TOKEN_REQUEST_TOKEN), name);
  }
  t.deepEqual(seen, [], 'nothing reached the service');
});

test('401 without a token: exit 2 naming IBS_TOKEN, the POST sent once', async (t) => {
  const { url, seen } = await service(t, { expect: () => 'Bearer something' });
  const ibs = runIbs(buildArgs(url));
  t.is(await ibs.exited, 2, ibs.stderr());
  t.regex(
    ibs.stderr(),
    /POST \/build needs a token \(401\): a bearer token is required \(Authorization: Bearer <token>\); set IBS_TOKEN, or IBS_OIDC_AUDIENCE/,
  );
  t.is(seen.filter((s) => s.method === 'POST').length, 1);
});

test('401 for a bad token: exit 2 with invalid_token and the reason, never sent again', async (t) => {
  const token = staticToken();
  const { url, seen } = await service(t, { expect: () => 'Bearer another' });
  const ibs = runIbs(buildArgs(url, '--json'), { IBS_TOKEN: token });
  t.is(await ibs.exited, 2, ibs.stderr());
  t.regex(
    ibs.stderr(),
    /POST \/build: the token was refused \(401, invalid_token\): the bearer token is refused: unknown token/,
  );
  const doc = JSON.parse(ibs.stdout()) as Record<string, unknown>;
  t.like(doc, { exitCode: 2, status: 401 });
  // The watch may have asked for the build's phase meanwhile; the POST went once.
  t.is(seen.filter((s) => s.method === 'POST').length, 1);
});

test('403 from the rules: exit 2 with the message and its code, on the POST, a poll and the commands', async (t) => {
  const token = staticToken();
  const denied = (what: string) => ({
    status: 403,
    body: { code: 'ACCESS_DENIED', message: `no access rule grants ${what} to token ops` },
  });
  const { url, seen } = await service(t, {
    expect: () => `Bearer ${token}`,
    answer: ({ method, url: path }) => {
      if (method === 'POST' && path === '/build')
        return seen.filter((s) => s.method === 'POST').length === 1 ? denied('build') : undefined;
      if (path.startsWith(`/builds/${ID}?wait=`)) return denied('read');
      if (method === 'DELETE' && path.startsWith('/image')) return denied('delete');
      if (path.startsWith('/logs/')) return denied('read');
      return undefined;
    },
  });
  const post = runIbs(buildArgs(url), { IBS_TOKEN: token });
  t.is(await post.exited, 2, post.stderr());
  t.regex(
    post.stderr(),
    /POST \/build was not allowed for this identity \(403\): no access rule grants build to token ops \(ACCESS_DENIED\)/,
  );
  t.is(seen.filter((s) => s.method === 'POST').length, 1, 'a 403 is not sent again');

  const poll = runIbs(buildArgs(url), { IBS_TOKEN: token });
  t.is(await poll.exited, 2, poll.stderr());
  t.regex(
    poll.stderr(),
    new RegExp(`GET /builds/${ID} was not allowed for this identity \\(403\\): no access rule grants read`),
  );
  t.is(seen.filter((s) => s.url.includes('wait=')).length, 1, 'a refused poll is not asked again');

  const image = ['--server', url, '--registry', 'r.example', '--name', 'app', '--tag', '1'];
  for (const args of [
    ['image', 'delete', ...image],
    ['logs', CLONE_LOG, '--server', url],
    ['logs', CLONE_LOG, '--follow', '--server', url],
  ]) {
    const ibs = runIbs(args, { IBS_TOKEN: token });
    t.is(await ibs.exited, 2, `${args.join(' ')}: ${ibs.stderr()}`);
    t.regex(
      ibs.stderr(),
      /was not allowed for this identity \(403\): no access rule grants (delete|read) to token ops \(ACCESS_DENIED\)/,
    );
  }
});

test('canary: a service echoing the token back shows none of the tokens in ibs output or GITHUB_OUTPUT', async (t) => {
  const token = staticToken();
  const leaky = await service(t, { echo: true, expect: () => `Bearer ${token}` });
  const staticOutput = await scratchFile(t);
  const withStatic = runIbs(buildArgs(leaky.url), { IBS_TOKEN: token, GITHUB_OUTPUT: staticOutput });
  t.is(await withStatic.exited, 0, withStatic.stderr());

  const endpoint = await actionsTokenEndpoint(() => jwt());
  t.teardown(() => endpoint.close());
  const leakyToo = await service(t, {
    echo: true,
    expect: () => `Bearer ${endpoint.minted.at(-1) ?? 'none'}`,
  });
  const jwtOutput = await scratchFile(t);
  const env = { ...endpoint.env, IBS_OIDC_AUDIENCE: AUDIENCE, GITHUB_OUTPUT: jwtOutput };
  const withJwt = runIbs(buildArgs(leakyToo.url), env);
  t.is(await withJwt.exited, 0, withJwt.stderr());
  // A refusal that echoes the token, and a --json document.
  const refused = runIbs(buildArgs(leaky.url, '--json'), { IBS_TOKEN: `${token}-wrong` });
  t.is(await refused.exited, 2, refused.stderr());

  const printed = [
    await everythingPrinted(withStatic, staticOutput),
    await everythingPrinted(withJwt, jwtOutput),
    await everythingPrinted(refused),
  ].join('\n');
  const [minted] = endpoint.minted;
  if (minted === undefined) return t.fail('no ID token was minted');
  for (const secret of [
    token,
    minted,
    minted.split('.')[2] ?? '',
    endpoint.env.ACTIONS_ID_TOKEN_REQUEST_TOKEN,
  ])
    t.false(printed.includes(secret), `a token was printed: ${secret.slice(0, 12)}...`);
  // The echoes were there, and were masked.
  t.regex(await readFile(staticOutput, 'utf8'), /^image=r\.example\/app:1 \(caller: Bearer \*\*\*\)$/m);
  t.regex(withJwt.stderr(), /a line of \/logs\/.* \(caller: Bearer \*\*\*\)/);
  t.regex(refused.stdout(), /unknown token \(caller: Bearer \*\*\*\)/);
});
