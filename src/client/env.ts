/**
 * The one place ibs reads its environment: the server default, the credentials (only ever from
 * here, never from argv) and GITHUB_OUTPUT. Credentials given by halves are refused.
 */
import { UsageError } from './args.js';
import type { Secret } from './mask.js';

export type Env = Readonly<Record<string, string | undefined>>;

/** A copy of the process environment (the only read of process.env in src/client). */
export const processEnv = (): Env => ({ ...process.env });

export interface Credentials {
  readonly git?: { readonly username: string; readonly token: string };
  readonly registry?: { readonly registry: string; readonly username: string; readonly password: string };
}

const set = (value: string | undefined): value is string => value !== undefined && value !== '';

/** The credentials of the environment; `registryArg` is --registry (IBS_REGISTRY's default). */
export function credentialsOf(env: Env, registryArg: string | undefined): Credentials {
  const out: { git?: Credentials['git']; registry?: Credentials['registry'] } = {};
  const { IBS_GIT_USERNAME: user, IBS_GIT_TOKEN: token } = env;
  if (set(user) !== set(token)) throw new UsageError('IBS_GIT_USERNAME and IBS_GIT_TOKEN go together');
  if (set(user) && set(token)) out.git = { username: user, token };
  const { IBS_REGISTRY_USERNAME: regUser, IBS_REGISTRY_PASSWORD: password } = env;
  if (set(regUser) !== set(password)) {
    throw new UsageError('IBS_REGISTRY_USERNAME and IBS_REGISTRY_PASSWORD go together');
  }
  if (set(regUser) && set(password)) {
    const registry = set(env.IBS_REGISTRY) ? env.IBS_REGISTRY : registryArg;
    if (!set(registry)) throw new UsageError('registry credentials need IBS_REGISTRY or --registry');
    out.registry = { registry, username: regUser, password };
  }
  return out;
}

/** What must never be printed. */
export function secretsOf(credentials: Credentials): Secret[] {
  const out: Secret[] = [];
  if (credentials.git) out.push({ value: credentials.git.token, user: credentials.git.username });
  if (credentials.registry)
    out.push({ value: credentials.registry.password, user: credentials.registry.username });
  return out;
}

export const githubOutputPath = (env: Env): string | undefined =>
  set(env.GITHUB_OUTPUT) ? env.GITHUB_OUTPUT : undefined;
