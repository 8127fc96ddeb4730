// Caller identity on the real stack (docs/auth.md): the service as a process with identities
// enforced, trusting an OIDC issuer of the test's own over https through NODE_EXTRA_CA_CERTS,
// in Redis mode; real builds, real registry deletes, ibs as a CI job runs it. Nothing inside the
// service is replaced. The tests run in order: the key set is rotated and the issuer stopped late.
import test from 'ava';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ACCESS_DECIDED } from '../../src/rules/event-types.js';
import { actionsTokenEndpoint } from '../helpers/actions-token-endpoint.js';
import { httpsCreds, servedRepo, stack } from '../helpers/build-support.js';
import { eventually } from '../helpers/eventually.js';
import { newSecret, startReceiver, type EventReceiver } from '../helpers/event-receiver.js';
import { ibsBuildArgs, runIbs } from '../helpers/ibs-process.js';
import { startIssuer, type TestIssuer } from '../helpers/oidc-issuer.js';
import { dumpRedis } from '../helpers/redis-dump.js';
import { replicaEnv } from '../helpers/replicas.js';
import { spawnService, type ServiceProcess } from '../helpers/service-process.js';

const AUDIENCE = 'image-build-service';
const hex = (): string => randomBytes(4).toString('hex');
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** A repository `<owner>/<app>` served by the stack's https git server, with an image definition. */
function ownedRepo(owner: string, app: string): { repository: string; path: string; remove: () => void } {
  const repo = servedRepo((work) => {
    mkdirSync(join(work, '.devcontainer'));
    writeFileSync(
      join(work, '.devcontainer', 'devcontainer.json'),
      JSON.stringify({ image: stack.BASE_IMAGE_ANON, remoteUser: `u${hex()}` }),
    );
  }, `${owner}/${app}`);
  return {
    repository: `${stack.GIT_HTTPS_URL}/${owner}/${app}.git`,
    path: `${owner}/${app}`,
    remove: () => {
      repo.remove();
      rmSync(join(stack.GIT_REPOS_DIR, owner), { recursive: true, force: true });
    },
  };
}

interface Fixture {
  issuer: TestIssuer;
  downIssuer: TestIssuer;
  receiver: EventReceiver;
  service: ServiceProcess;
  url: string;
  opsToken: string;
  teamA: { owner: string; repo: ReturnType<typeof ownedRepo>; token: string; sub: string };
  teamB: { owner: string; repo: ReturnType<typeof ownedRepo>; token: string };
  settingsDir: string;
  /** Every secret of the run: none may appear anywhere. */
  secrets: string[];
  ibsOutputs: string[];
}

let fx: Fixture;

const githubClaims = (owner: string, app: string, sub: string) => ({
  sub,
  aud: AUDIENCE,
  repository: `${owner}/${app}`,
  repository_owner: owner,
  ref_type: 'branch',
});

test.before(async () => {
  const issuer = await startIssuer();
  const downIssuer = await startIssuer();
  downIssuer.down();
  const eventSecret = newSecret();
  const receiver = await startReceiver([eventSecret]);
  const ownerA = `team-a-${hex()}`;
  const ownerB = `team-b-${hex()}`;
  const repoA = ownedRepo(ownerA, 'app');
  const repoB = ownedRepo(ownerB, 'app');
  const subA = `repo:${ownerA}@1/app@2:ref:refs/heads/main`;
  const opsToken = `ops-${randomBytes(24).toString('hex')}`;
  const settingsDir = mkdtempSync(join(tmpdir(), 'ibs-auth-settings-'));
  const settingsPath = join(settingsDir, 'settings.yaml');
  writeFileSync(
    settingsPath,
    stringify({
      events: {
        subscriptions: [
          { name: 'audit', url: receiver.url, secrets: [eventSecret], types: [ACCESS_DECIDED] },
        ],
      },
      auth: {
        mode: 'enforce',
        issuers: [
          { name: 'ci', issuer: issuer.url, audience: AUDIENCE },
          { name: 'unreachable', issuer: downIssuer.url, audience: AUDIENCE },
        ],
        tokens: [{ name: 'platform-ops', sha256: sha256(opsToken) }],
        rules: [
          {
            name: 'each-repository-builds-itself',
            issuer: 'ci',
            claims: { ref_type: 'branch' },
            actions: ['build', 'read', 'cancel'],
            repositories: [{ host: '127.0.0.1', path: '{repository}' }],
            images: [{ registry: stack.REGISTRY_ANON, name: '{repository}' }],
          },
          {
            name: 'ops',
            token: 'platform-ops',
            actions: ['build', 'read', 'cancel', 'delete', 'admin'],
            repositories: [{ host: '*', path: '**' }],
            images: [{ registry: '*', name: '**' }],
          },
        ],
      },
    }),
  );
  const service = spawnService(['--port', '0'], {
    ...replicaEnv(stack, stack.STACK_REDIS_URL),
    SERVICE_CONFIG_PATH: settingsPath,
    NODE_EXTRA_CA_CERTS: issuer.caFile,
  });
  const { port } = await service.waitForLog('listening');
  const tokenA = await issuer.token(githubClaims(ownerA, 'app', subA));
  const tokenB = await issuer.token(
    githubClaims(ownerB, 'app', `repo:${ownerB}@3/app@4:ref:refs/heads/main`),
  );
  fx = {
    issuer,
    downIssuer,
    receiver,
    service,
    url: `http://127.0.0.1:${String(port)}`,
    opsToken,
    teamA: { owner: ownerA, repo: repoA, token: tokenA, sub: subA },
    teamB: { owner: ownerB, repo: repoB, token: tokenB },
    settingsDir,
    secrets: [opsToken, sha256(opsToken), tokenA, tokenB],
    ibsOutputs: [],
  };
});

test.after.always(async () => {
  await fx.service.lose();
  await Promise.all([fx.issuer.close(), fx.downIssuer.close(), fx.receiver.close()]);
  fx.teamA.repo.remove();
  fx.teamB.repo.remove();
  rmSync(fx.settingsDir, { recursive: true, force: true });
});

const call = (path: string, token?: string, init: RequestInit = {}): Promise<Response> =>
  fetch(`${fx.url}${path}`, {
    ...init,
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(init.headers as Record<string, string> | undefined),
    },
  });

const buildBody = (repository: string, name: string) =>
  JSON.stringify({
    repository,
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name },
  });

const postBuild = (
  token: string | undefined,
  repository: string,
  name: string,
  requestId = `auth-${hex()}`,
) =>
  call('/build', token, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': requestId },
    body: buildBody(repository, name),
  });

const imageQuery = (name: string, tag: string): string =>
  `registry=${encodeURIComponent(stack.REGISTRY_ANON)}&name=${encodeURIComponent(name)}&tag=${tag}`;

test.serial('no token: 401 with the bearer challenge; probes and metrics stay open', async (t) => {
  const answer = await call('/builds');
  t.is(answer.status, 401);
  t.is(answer.headers.get('www-authenticate'), 'Bearer realm="image-build-service"');
  t.is((await call('/config')).status, 401);
  t.is((await call('/build', undefined, { method: 'POST', body: '{}' })).status, 401);
  // Another scheme, or the token in the query, is not read.
  t.is((await call(`/builds?access_token=${fx.opsToken}`)).status, 401);
  t.is(
    (await call('/builds', undefined, { headers: { authorization: `Basic ${fx.opsToken}` } })).status,
    401,
  );
  t.is((await call('/health/live')).status, 200);
  t.is((await call('/metrics')).status, 200);
});

test.serial(
  'each bad token is a 401 invalid_token, with the key set fetched a handful of times',
  async (t) => {
    const { issuer, teamA } = fx;
    const claims = githubClaims(teamA.owner, 'app', teamA.sub);
    const now = Math.floor(Date.now() / 1000);
    const valid = await issuer.token(claims);
    const [head, , signature] = valid.split('.');
    const tampered = `${head ?? ''}.${Buffer.from(JSON.stringify({ ...claims, iss: issuer.url, exp: now + 600, repository: 'x/y' })).toString('base64url')}.${signature ?? ''}`;
    const bad: Record<string, string> = {
      expired: await issuer.token(claims, { expiresIn: -300 }),
      'not yet valid': await issuer.token({ ...claims, nbf: now + 600 }),
      'wrong audience': await issuer.token({ ...claims, aud: 'another-service' }),
      'wrong issuer': await issuer.token({ ...claims, iss: 'https://issuer.example' }),
      'alg none': issuer.unsigned(claims),
      'HS256 with the public key': issuer.hmacWithPublicKey(claims),
      'another key under a known kid': await issuer.token(claims, {
        key: 'foreign',
        kid: (JSON.parse(Buffer.from(head ?? '', 'base64url').toString()) as { kid: string }).kid,
      }),
      'unknown kid': await issuer.token(claims, { key: 'foreign' }),
      tampered,
      garbage: 'not-a-token',
      'over 8 KiB': await issuer.token({ ...claims, padding: 'x'.repeat(9000) }),
    };
    fx.secrets.push(...Object.values(bad).filter((token) => token.length > 20), valid);
    const before = issuer.keySetFetches();
    for (const [what, token] of Object.entries(bad)) {
      for (let i = 0; i < 3; i += 1) {
        const answer = await call('/builds', token);
        t.is(answer.status, 401, what);
        t.is(
          answer.headers.get('www-authenticate'),
          'Bearer realm="image-build-service", error="invalid_token"',
          what,
        );
        const body = (await answer.json()) as { error: string };
        t.false(body.error.includes(token), what);
      }
    }
    t.is((await call('/builds', valid)).status, 200);
    t.true(issuer.keySetFetches() - before <= 3, `key set fetched ${issuer.keySetFetches() - before} times`);
  },
);

test.serial('a CI token builds its own repository into its image; the record says who asked', async (t) => {
  const { teamA } = fx;
  const requestId = `auth-own-${hex()}`;
  const answer = await postBuild(teamA.token, teamA.repo.repository, teamA.repo.path, requestId);
  const body = (await answer.json()) as { image?: string; tag?: string };
  t.is(answer.status, 200, JSON.stringify(body));
  t.truthy(body.image?.startsWith(`${stack.REGISTRY_ANON}/${teamA.repo.path}:`));
  const list = (await (await call(`/builds?requestId=${requestId}`, teamA.token)).json()) as {
    builds: { requestedBy?: unknown; repository: string }[];
  };
  t.deepEqual(list.builds[0]?.requestedBy, {
    kind: 'oidc',
    issuer: fx.issuer.url,
    subject: teamA.sub,
    name: 'ci',
  });
  // The allowed build is in the audit trail: a log line and an event.
  const line = fx.service
    .lines()
    .find((l) => (l.audit as { requestId?: string } | undefined)?.requestId === requestId);
  t.like(line?.audit, { decision: 'allow', action: 'build', rule: 'each-repository-builds-itself' });
  const decidedFor = (r: (typeof fx.receiver.received)[number]): boolean =>
    r.event.type === ACCESS_DECIDED &&
    (r.event.data?.customData as { requestId?: string } | undefined)?.requestId === requestId;
  await eventually(() => fx.receiver.received.some(decidedFor), {
    timeout: 30_000,
    what: 'the access.decided event of the build',
  });
  const event = fx.receiver.received.find(decidedFor);
  t.true(event?.verified[0]);
  t.like(event?.event.data?.customData, {
    decision: 'allow',
    action: 'build',
    identity: { subject: teamA.sub },
  });
});

test.serial('the same token gets 403 elsewhere; another owner gets 403 on this repository', async (t) => {
  const { teamA, teamB } = fx;
  const otherRepo = await postBuild(teamA.token, teamB.repo.repository, teamA.repo.path);
  t.is(otherRepo.status, 403);
  const otherImage = await postBuild(teamA.token, teamA.repo.repository, `${teamA.owner}/elsewhere`);
  t.is(otherImage.status, 403);
  const deletion = await call(`/image?${imageQuery(teamA.repo.path, 'latest')}`, teamA.token, {
    method: 'DELETE',
  });
  t.is(deletion.status, 403);
  t.is((await call('/config', teamA.token)).status, 403);
  const otherOwner = await postBuild(teamB.token, teamA.repo.repository, teamA.repo.path);
  t.is(otherOwner.status, 403);
  t.regex(((await otherOwner.json()) as { error: string }).error, /no access rule grants build/);
  // A rule's claim must hold: a tag's token (ref_type tag) is not the branch rule's.
  const tagToken = await fx.issuer.token({ ...githubClaims(teamA.owner, 'app', teamA.sub), ref_type: 'tag' });
  fx.secrets.push(tagToken);
  t.is((await postBuild(tagToken, teamA.repo.repository, teamA.repo.path)).status, 403);
  // Every denial is audited.
  const denials = fx.service
    .lines()
    .filter((l) => (l.audit as { decision?: string } | undefined)?.decision === 'deny');
  t.true(denials.length >= 5);
});

test.serial(
  'another team sees none of the builds: their record and log answer 404, a cancel 403',
  async (t) => {
    const { teamA, teamB } = fx;
    const asA = (await (await call('/builds', teamA.token)).json()) as {
      builds: { id: string; repository: string; gitCloneLogId?: string }[];
    };
    const own = asA.builds.find((b) => b.repository === teamA.repo.repository);
    if (own === undefined) return t.fail('team A does not see its build');
    t.true(asA.builds.every((b) => b.repository.includes(`/${teamA.owner}/`)));
    const asB = (await (await call('/builds', teamB.token)).json()) as { builds: { repository: string }[] };
    t.false(asB.builds.some((b) => b.repository === teamA.repo.repository));
    t.is((await call(`/builds/${own.id}`, teamB.token)).status, 404);
    t.is((await call(`/builds/${own.id}?wait=1`, teamB.token)).status, 404);
    t.is((await call(`/logs/${own.gitCloneLogId ?? ''}`, teamB.token)).status, 404);
    const before = await (await call(`/builds/${own.id}`, teamA.token)).text();
    const cancel = await call(`/builds/${own.id}`, teamB.token, { method: 'DELETE' });
    t.is(cancel.status, 403);
    t.regex(((await cancel.json()) as { error: string }).error, /^no access rule grants cancel on /);
    t.is(await (await call(`/builds/${own.id}`, teamA.token)).text(), before, 'the cancel changed nothing');
    t.is((await call(`/builds/${own.id}`, teamA.token)).status, 200);
    t.is((await call(`/logs/${own.gitCloneLogId ?? ''}`, teamA.token)).status, 200);
  },
);

test.serial(
  'a static token with delete and admin deletes an image and reads /config; a wrong one: 401',
  async (t) => {
    const { teamA } = fx;
    const built = (await (
      await call(`/builds?repository=${encodeURIComponent(teamA.repo.repository)}`, fx.opsToken)
    ).json()) as {
      builds: { answer?: { body: { tag?: string } } }[];
    };
    const tag = built.builds.find((b) => b.answer?.body.tag !== undefined)?.answer?.body.tag;
    if (tag === undefined) return t.fail('no built tag');
    t.like(await (await call(`/image?${imageQuery(teamA.repo.path, tag)}`, teamA.token)).json(), {
      exists: true,
    });
    const deleted = await call(`/image?${imageQuery(teamA.repo.path, tag)}`, fx.opsToken, {
      method: 'DELETE',
    });
    t.is(deleted.status, 200);
    t.like(await deleted.json(), { deleted: true });
    t.like(await (await call(`/image?${imageQuery(teamA.repo.path, tag)}`, fx.opsToken)).json(), {
      exists: false,
    });
    const config = await call('/config', fx.opsToken);
    t.is(config.status, 200);
    t.is((await call('/config', `${fx.opsToken}x`)).status, 401);
    const audit = fx.service
      .lines()
      .map((l) => l.audit as { action?: string; decision?: string; identity?: { kind?: string } } | undefined)
      .filter((a) => a?.action === 'delete' && a.decision === 'allow');
    t.like(audit[0], { identity: { kind: 'token' } });
  },
);

test.serial(
  'ibs builds with IBS_TOKEN and with an Actions ID token; without a token it exits 2',
  async (t) => {
    const { teamA } = fx;
    const build = {
      server: fx.url,
      repository: teamA.repo.repository,
      registry: stack.REGISTRY_ANON,
      name: teamA.repo.path,
    };
    const git = { IBS_GIT_USERNAME: stack.GIT_HTTPS_USER, IBS_GIT_TOKEN: stack.GIT_HTTPS_PASSWORD };
    const withToken = runIbs(ibsBuildArgs(build), { ...git, IBS_TOKEN: teamA.token });
    t.is(await withToken.exited, 0, withToken.stderr());
    const endpoint = await actionsTokenEndpoint((audience) =>
      fx.issuer.token({ ...githubClaims(teamA.owner, 'app', teamA.sub), aud: audience }),
    );
    t.teardown(() => endpoint.close());
    const actions = runIbs(ibsBuildArgs(build), { ...git, ...endpoint.env, IBS_OIDC_AUDIENCE: AUDIENCE });
    t.is(await actions.exited, 0, actions.stderr());
    t.is(endpoint.requests[0]?.audience, AUDIENCE);
    const none = runIbs(ibsBuildArgs(build), git);
    t.is(await none.exited, 2);
    t.regex(none.stderr(), /401|token/i);
    fx.secrets.push(...endpoint.minted, endpoint.env.ACTIONS_ID_TOKEN_REQUEST_TOKEN);
    for (const run of [withToken, actions, none]) fx.ibsOutputs.push(run.stdout(), run.stderr());
  },
);

test.serial(
  'after a rotation a token of the new key is accepted; with the issuer down, a cached key still is',
  async (t) => {
    const { issuer, teamA } = fx;
    await issuer.rotate();
    const rotated = await issuer.token(githubClaims(teamA.owner, 'app', teamA.sub));
    const rotatedEc = await issuer.token(githubClaims(teamA.owner, 'app', teamA.sub), { key: 'ec' });
    fx.secrets.push(rotated, rotatedEc);
    // A refetch for an unknown kid waits out the cooldown of earlier ones (at most 30 s).
    await eventually(async () => (await call('/builds', rotated)).status === 200, {
      timeout: 45_000,
      interval: 1000,
      what: 'the rotated key to be accepted',
    });
    issuer.down();
    t.teardown(() => issuer.up());
    t.is((await call('/builds', rotated)).status, 200);
    t.is((await call('/builds', rotatedEc)).status, 200);
    // An issuer whose keys were never had: 503 with Retry-After, never a 5xx for the token itself.
    const unreachable = await fx.downIssuer.token({ sub: 'x', aud: AUDIENCE });
    fx.secrets.push(unreachable);
    const answer = await call('/builds', unreachable);
    t.is(answer.status, 503);
    t.is(answer.headers.get('retry-after'), '30');
  },
);

/** Every file under `dir`, read as text. */
function filesText(dir: string): string {
  let out = '';
  const walk = (path: string): void => {
    for (const entry of readdirSync(path)) {
      const full = join(path, entry);
      const info = statSync(full, { throwIfNoEntry: false });
      if (info === undefined) continue;
      if (info.isDirectory()) walk(full);
      else if (info.isFile() && info.size < 8 * 1024 * 1024) out += readFileSync(full, 'latin1');
    }
  };
  walk(dir);
  return out;
}

test.serial(
  'canary: no token, JWT or token digest in logs, command logs, records, events, /config, Redis, scratch or ibs output',
  async (t) => {
    const records = await (await call('/builds', fx.opsToken)).text();
    const logs = await Promise.all(
      (JSON.parse(records) as { builds: { gitCloneLogId?: string; imageBuildLogId?: string }[] }).builds
        .flatMap((b) => [b.gitCloneLogId, b.imageBuildLogId])
        .filter((id): id is string => id !== undefined)
        .map(async (id) => (await call(`/logs/${id}`, fx.opsToken)).text()),
    );
    const places: Record<string, string> = {
      'service stdout': fx.service.stdout(),
      'service stderr': fx.service.stderr(),
      records,
      'command logs': logs.join('\n'),
      events: fx.receiver.received.map((r) => r.raw).join('\n'),
      '/config': await (await call('/config', fx.opsToken)).text(),
      metrics: await (await call('/metrics')).text(),
      redis: await dumpRedis(stack.STACK_REDIS_URL),
      scratch: filesText(fx.service.dir),
      'ibs output': fx.ibsOutputs.join('\n'),
    };
    t.true(fx.receiver.received.length > 0);
    for (const secret of fx.secrets) {
      const signature = secret.split('.')[2];
      for (const [where, text] of Object.entries(places)) {
        t.false(text.includes(secret), `a token in ${where}`);
        if (signature !== undefined && signature.length > 20)
          t.false(text.includes(signature), `a signature in ${where}`);
      }
    }
  },
);
