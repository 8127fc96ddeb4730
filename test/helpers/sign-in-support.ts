/**
 * What the people's sign-in test needs around the service: a free loopback port (the redirect URL
 * registered at the provider names it before the service starts), the settings of a service with
 * people's sign-in and team rules, the service as a process, builds by a static token, and
 * repositories of an owner on the stack's https git server.
 */
import { randomBytes, createHash } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { httpsCreds, ownDockerfileRepo, stack } from './build-support.js';
import { postAsync, replicaEnv, untilFinished } from './replicas.js';
import { spawnService, type ServiceProcess } from './service-process.js';

const hex = (): string => randomBytes(4).toString('hex');
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The owners of the repositories the rules name. */
export interface Owners {
  readonly a: string;
  readonly b: string;
  readonly shared: string;
}

/** A free port of 127.0.0.1: the redirect URL registered at the provider names it before the service starts. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface Service {
  readonly process: ServiceProcess;
  readonly url: string;
}

export function settings(
  providerUrl: string,
  port: number,
  clientId: string,
  owners: Owners,
  opsToken: string,
) {
  const people = (name: string, path: string, actions: string[], group?: string) => ({
    name,
    issuer: 'people',
    ...(group === undefined ? {} : { claims: { groups: group } }),
    actions,
    repositories: [{ host: '127.0.0.1', path }],
  });
  return stringify({
    auth: {
      mode: 'enforce',
      issuers: [{ name: 'people', issuer: providerUrl, audience: 'ibs-api' }],
      tokens: [{ name: 'ops', sha256: sha256(opsToken) }],
      rules: [
        people('team-a', `${owners.a}/**`, ['read', 'cancel'], 'team-a'),
        people('team-b', `${owners.b}/**`, ['read', 'cancel'], 'team-b'),
        people('everyone-reads-shared', `${owners.shared}/**`, ['read']),
        {
          name: 'ops',
          token: 'ops',
          actions: ['build', 'read', 'cancel', 'delete', 'admin'],
          repositories: [{ host: '*', path: '**' }],
          images: [{ registry: '*', name: '**' }],
        },
      ],
      browser: {
        issuer: 'people',
        clientId,
        scopes: ['openid', 'email', 'profile', 'groups'],
        redirectUrl: `http://127.0.0.1:${String(port)}/auth/callback`,
      },
    },
  });
}

export async function startService(
  dir: string,
  name: string,
  yaml: string,
  port: number,
  env: Record<string, string>,
): Promise<Service> {
  const path = join(dir, `${name}.yaml`);
  writeFileSync(path, yaml);
  const child = spawnService(['--port', String(port)], {
    ...replicaEnv(stack, stack.STACK_REDIS_URL),
    SERVICE_CONFIG_PATH: path,
    ...env,
  });
  await child.waitForLog('listening');
  return { process: child, url: `http://127.0.0.1:${String(port)}` };
}

const bearer = (token: string): Record<string, string> => ({ Authorization: `Bearer ${token}` });

/** An async build of `repository` by the ops token; its id. */
export async function startBuild(
  url: string,
  token: string,
  repository: string,
  branch: string,
): Promise<string> {
  const body = { branch, gitCredentials: httpsCreds(), buildOptions: { noCache: true } };
  const image = { registry: stack.REGISTRY_ANON, name: `it/sign-in-${hex()}` };
  return (await postAsync({ url }, repository, image, { body, headers: bearer(token) })).id;
}

/** Resolves once the build `id` has finished, read with `token`. */
export async function finished(url: string, token: string, id: string): Promise<void> {
  await untilFinished({ url }, [id], bearer(token));
}

export function ownedRepo(owner: string, dockerfile: string): { remove: () => void } {
  const repo = ownDockerfileRepo(dockerfile, `${owner}/app`);
  return {
    remove: () => {
      repo.remove();
      rmSync(join(stack.GIT_REPOS_DIR, owner), { recursive: true, force: true });
    },
  };
}
