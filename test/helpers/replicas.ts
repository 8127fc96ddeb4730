/**
 * Several real service processes (the package's entry, test/helpers/service-process.ts) sharing one
 * Redis, configured like test/helpers/build-support.ts configures the in-process app: the stack's
 * builder, its registries as plain-HTTP ones, its git CA trusted. The Redis is of either kind
 * (test/helpers/replica-redis.ts): the replica tests run their scenarios on both.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BuildRecord } from '../../src/builds/types.js';
import type { StackEnv } from '../stack/env.js';
import type { RedisKind } from './redis-kind.js';
import type { ReplicaRedis } from './replica-redis.js';
import { spawnService, type ServiceProcess } from './service-process.js';
import { eventually } from './eventually.js';

export interface Replica {
  readonly name: string;
  readonly url: string;
  readonly service: ServiceProcess;
}

export interface JsonAnswer<B = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: B;
}

/** Fields of an async `POST /build` beyond its repository and image, and headers it also carries. */
export interface PostMore {
  readonly body?: Readonly<Record<string, unknown>>;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * The environment of a replica: the stack's parts, one slot, and the Redis: a URL (REDIS_URL), or a
 * Redis of the test's own of either kind (its REDIS_URL, or REDIS_CLUSTER_NODES and the password file).
 */
export function replicaEnv(
  stack: StackEnv,
  redis: string | ReplicaRedis,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    BUILDER_ENDPOINT: stack.STACK_BUILDER_ENDPOINT,
    INSECURE_REGISTRIES: [
      stack.REGISTRY_ANON,
      stack.REGISTRY_NODELETE,
      stack.REGISTRY_BASIC,
      stack.REGISTRY_TOKEN,
    ].join(','),
    GIT_SSL_CAINFO: stack.GIT_CA_FILE,
    MAX_CONCURRENT_BUILDS: '0',
    COMMAND_LOG_RETENTION: '100',
    ...(typeof redis === 'string' ? { REDIS_URL: redis } : redis.env),
    ...extra,
  };
}

/**
 * Starts `names.length` replicas with the same environment; resolves once each one listens and is
 * ready (its Redis connection up: a replica still connecting answers 503, as readiness says).
 */
export async function startReplicas(
  names: readonly string[],
  env: Record<string, string>,
): Promise<Replica[]> {
  return Promise.all(
    names.map(async (name) => {
      const service = spawnService(['--port', '0'], env);
      const listening = await service.waitForLog('listening');
      const url = `http://127.0.0.1:${String(listening.port)}`;
      await eventually(async () => (await fetch(`${url}/health/ready`)).status === 200, {
        timeout: 60_000,
        interval: 50,
        what: `replica ${name} to be ready`,
      });
      return { name, url, service };
    }),
  );
}

/**
 * Kills a replica as a lost pod (service-process.ts `lose`) and starts it again on the same port,
 * so a front in front of it passes to the new process; resolves once it is ready.
 */
export async function restartReplica(replica: Replica, env: Record<string, string>): Promise<Replica> {
  await replica.service.lose();
  const port = new URL(replica.url).port;
  const service = spawnService(['--port', port], env);
  await service.waitForLog('listening');
  await eventually(async () => (await fetch(`${replica.url}/health/ready`)).status === 200, {
    timeout: 15_000,
    interval: 50,
    what: `replica ${replica.name} to be ready again`,
  });
  return { name: replica.name, url: replica.url, service };
}

export async function stopReplicas(replicas: readonly Replica[]): Promise<void> {
  // Their builds too: one left running would weigh on the tests after it.
  await Promise.all(replicas.map((r) => r.service.lose()));
}

/** Throws unless `replica`'s GET /config says it runs on a Redis of `kind` (a cluster names its nodes). */
export async function onKind(replica: Replica, kind: RedisKind): Promise<void> {
  const { redis } = (await (await fetch(`${replica.url}/config`)).json()) as {
    redis: Record<string, unknown>;
  };
  if (redis.configured !== true || 'nodes' in redis !== (kind === 'cluster'))
    throw new Error(`replica ${replica.name} is not on a Redis ${kind}: ${JSON.stringify(redis)}`);
}

/** A JSON `POST` of `body` to `path` of a replica or an in-process app: its JSON answer, whatever the status. */
export async function postJson<B = Record<string, unknown>>(
  service: { readonly url: string },
  path: string,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): Promise<JsonAnswer<B>> {
  const res = await fetch(`${service.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as B };
}

/** An async `POST /build` (Prefer: respond-async) of `body`: its JSON answer, whatever the status. */
export const postAsyncAnswer = <B = Record<string, unknown>>(
  service: { readonly url: string },
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): Promise<JsonAnswer<B>> => postJson<B>(service, '/build', body, { Prefer: 'respond-async', ...headers });

export async function getText(
  replica: Replica,
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(`${replica.url}${path}`, init);
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** `GET /builds?query` on one replica or an in-process app: every page of its list (any other answer throws). */
export async function listBuilds(service: { readonly url: string }, query: string): Promise<BuildRecord[]> {
  const builds: BuildRecord[] = [];
  let after: string | undefined;
  do {
    const params = new URLSearchParams(query);
    params.set('limit', '500');
    if (after !== undefined) params.set('after', after);
    const res = await fetch(`${service.url}/builds?${params.toString()}`);
    if (res.status !== 200) throw new Error(`GET /builds on ${service.url} answered ${res.status}`);
    const page = (await res.json()) as { builds: BuildRecord[]; next?: string };
    builds.push(...page.builds);
    after = page.next;
  } while (after !== undefined);
  return builds;
}

/**
 * Resolves with the milliseconds it took until `check` holds (re-asked every `everyMs`, the
 * readiness endpoint being the signal); rejects after `timeoutMs`.
 */
export async function within(
  what: string,
  timeoutMs: number,
  check: () => Promise<boolean>,
  everyMs = 200,
): Promise<number> {
  const started = Date.now();
  await eventually(() => check().catch(() => false), { timeout: timeoutMs, interval: everyMs, what });
  return Date.now() - started;
}

/** The milliseconds until no one of `replicas` lists the build of `requestId` as running. */
export function leftRunningList(
  replicas: readonly { readonly url: string }[],
  requestId: string,
): Promise<number> {
  return within('the dead build leaves the list', 60_000, async () => {
    const lists = await Promise.all(
      replicas.map((replica) => listBuilds(replica, `requestId=${requestId}&status=running`)),
    );
    return lists.every((list) => list.length === 0);
  });
}

/**
 * Writes the stack's git credentials as server entries (GIT_CREDENTIALS_CONFIG_PATH) into `dir`:
 * requests then carry no credential of their own, so any replica may run a queued build.
 */
export function serverGitCredentials(stack: StackEnv, dir: string): string {
  const path = join(dir, 'git-credentials.json');
  const entry = {
    host: '127.0.0.1',
    kind: 'https',
    username: stack.GIT_HTTPS_USER,
    token: stack.GIT_HTTPS_PASSWORD,
  };
  writeFileSync(path, JSON.stringify([entry]));
  return path;
}

/**
 * An async `POST /build` of `repository` to `image` on a replica or an in-process app (no
 * credentials of its own unless `more.body` gives some): its 202 record; any other answer throws.
 */
export async function postAsync(
  service: { readonly url: string },
  repository: string,
  image: { registry: string; name: string },
  more: PostMore = {},
): Promise<BuildRecord> {
  const answer = await postAsyncAnswer<BuildRecord>(
    service,
    { repository, image, ...more.body },
    more.headers,
  );
  if (answer.status !== 202)
    throw new Error(`POST /build answered ${String(answer.status)}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/** `GET /builds/{id}` on a replica or an in-process app, with `headers` (a token): the record. */
export const getBuild = async (
  service: { readonly url: string },
  id: string,
  headers: Readonly<Record<string, string>> = {},
): Promise<BuildRecord> =>
  (await (await fetch(`${service.url}/builds/${id}`, { headers })).json()) as BuildRecord;

/** The records of `ids` read on `service` (with `headers`) once every one has finished (up to five minutes). */
export async function untilFinished(
  service: { readonly url: string },
  ids: readonly string[],
  headers: Readonly<Record<string, string>> = {},
): Promise<BuildRecord[]> {
  let records: BuildRecord[] = [];
  await eventually(
    async () => {
      records = await Promise.all(ids.map((id) => getBuild(service, id, headers)));
      return records.every((r) => r.phase === 'finished');
    },
    { timeout: 300_000, interval: 250, what: `builds ${ids.join(', ')} to end` },
  );
  return records;
}

/** How many times each of `replicas` logged the build `id` as succeeded, by replica name. */
export const succeededOn = (replicas: readonly Replica[], id: string): Record<string, number> =>
  Object.fromEntries(
    replicas.map((r) => [
      r.name,
      r.service.lines().filter((l) => l.msg === 'build succeeded' && l.buildId === id).length,
    ]),
  );
