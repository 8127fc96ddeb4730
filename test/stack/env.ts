// The stack's endpoints as a typed record, for tests and benchmarks:
//   import { stackEnv } from '../stack/env.js';
// Reads $IBS_STACK_DIR/env.json (default /tmp/ibs-stack), written by `npm run stack -- up`.
// No key is the env var of a service option (src/config/options.ts): sourcing the env never
// configures a service by accident (a unit test checks it).
import fs from 'node:fs';
import path from 'node:path';
import { stackDir } from './layout.js';

export const STACK_ENV_KEYS = [
  'STACK_DIR',
  'STACK_BUILDER_ENDPOINT',
  'STACK_DOCKER_HOST',
  'REGISTRY_ANON',
  'REGISTRY_NODELETE',
  'REGISTRY_BASIC',
  'REGISTRY_BASIC_USER',
  'REGISTRY_BASIC_PASSWORD',
  'REGISTRY_TOKEN',
  'REGISTRY_TOKEN_USER',
  'REGISTRY_TOKEN_PASSWORD',
  'TOKEN_ISSUER_URL',
  'TOKEN_ISSUER_COUNT_URL',
  'BASE_IMAGE_ANON',
  'BASE_IMAGE_NODELETE',
  'BASE_IMAGE_BASIC',
  'BASE_IMAGE_TOKEN',
  'GIT_HTTPS_URL',
  'GIT_HTTPS_USER',
  'GIT_HTTPS_PASSWORD',
  'GIT_CA_FILE',
  'GIT_SSH_URL',
  'GIT_SSH_HOST',
  'GIT_SSH_PORT',
  'GIT_SSH_KEY_FILE',
  'GIT_SSH_HOST_KEY',
  'GIT_DAEMON_URL',
  'GIT_HTTP_URL',
  // Extras (beyond the common key list):
  'REGISTRY_TOKEN_SERVICE', // the `service` the token registry expects (aud of its tokens)
  'GIT_SSH_KNOWN_HOSTS_FILE', // a file holding GIT_SSH_HOST_KEY
  'GIT_SSH_HOST_KEY_FINGERPRINT', // SHA256:... of the sshd host key
  'GIT_REPOS_DIR', // the bare fixture repositories on disk
  'GIT_HTTPS_NO_FILTER_URL', // GIT_HTTPS_URL's repositories from a server without partial clone support
  'STACK_DOCKER_CONFIG', // DOCKER_CONFIG with the remote builder STACK_BUILDER_NAME and registry creds
  'STACK_BUILDER_NAME',
  'STACK_REDIS_URL', // redis://:<password>@127.0.0.1:<port> (a real redis-server, no persistence)
  'STACK_REDIS_CLUSTER_NODES', // 127.0.0.1:P,127.0.0.1:P,127.0.0.1:P (a three-master Redis Cluster)
  'STACK_REDIS_CLUSTER_PASSWORD_FILE', // a file holding its password (REDIS_PASSWORD_FILE)
  // Two builders, each its own dockerd and BuildKit cache; STACK_BUILDER_ENDPOINT is BUILDER_A_ENDPOINT.
  'BUILDER_A_ENDPOINT', // tcp://127.0.0.1:P, plain
  'BUILDER_A_TLS_ENDPOINT', // tcp://127.0.0.1:P, mutual TLS only (client certificate from the stack CA)
  'BUILDER_B_ENDPOINT',
  'BUILDER_B_TLS_ENDPOINT',
  'BUILDER_TLS_CA_FILE', // the CA of the fronts' server certificate (SAN IP:127.0.0.1, DNS:localhost)
  'STACK_BUILDER_TLS_SERVER_NAME', // localhost (a name in the server certificate)
  'BUILDER_TLS_CLIENT_CERT_FILE', // the service's client certificate (the fronts accept it)
  'BUILDER_TLS_CLIENT_KEY_FILE',
  'BUILDER_TLS_OTHER_CA_FILE', // another CA (does not sign the fronts' certificate)
  'BUILDER_TLS_OTHER_CA_CLIENT_CERT_FILE', // a client pair from that other CA (the fronts refuse it)
  'BUILDER_TLS_OTHER_CA_CLIENT_KEY_FILE',
  'STACK_DOCKER_HOST_B', // builder b's engine
  'STACK_BUILDER_B_NAME', // the buildx builder on BUILDER_B_ENDPOINT in STACK_DOCKER_CONFIG
  'COSIGN_BIN', // trixie's cosign (installed by .ci/install.sh)
  'SBOM_GENERATOR_IMAGE', // localhost:P/dev/sbom-generator:<hash>, BuildKit's SBOM scanner protocol
] as const;

export type StackEnvKey = (typeof STACK_ENV_KEYS)[number];
export type StackEnv = Readonly<Record<StackEnvKey, string>>;

/**
 * Earlier names of renamed keys (they were options' env vars). env.json also carries them, for
 * checkouts that still read the earlier names from a shared stack; the sourceable `env` file and
 * `npm run stack -- env` never do. A stack written before the rename is read through them.
 */
export const EARLIER_KEY_NAMES: Readonly<Partial<Record<StackEnvKey, string>>> = Object.freeze({
  STACK_BUILDER_ENDPOINT: 'BUILDER_ENDPOINT',
  STACK_REDIS_URL: 'REDIS_URL',
  STACK_BUILDER_TLS_SERVER_NAME: 'BUILDER_TLS_SERVER_NAME',
});

/** env.json's object: every key, and the earlier names of renamed ones. */
export function envJsonRecord(env: StackEnv): Record<string, string> {
  const out: Record<string, string> = { ...env };
  for (const [key, earlier] of Object.entries(EARLIER_KEY_NAMES)) out[earlier] = env[key as StackEnvKey];
  return out;
}

export class StackNotRunningError extends Error {
  constructor(detail: string) {
    super(`The local stack is not available (${detail}). Start it with \`npm run stack -- up\`.`);
    this.name = 'StackNotRunningError';
  }
}

/** Parses and checks an env.json object; throws StackNotRunningError if a key is missing. */
export function parseStackEnv(raw: unknown, source: string): StackEnv {
  if (typeof raw !== 'object' || raw === null) throw new StackNotRunningError(`${source} is not an object`);
  const rec = { ...(raw as Record<string, unknown>) };
  for (const [key, earlier] of Object.entries(EARLIER_KEY_NAMES)) rec[key] ??= rec[earlier];
  const missing = STACK_ENV_KEYS.filter((k) => typeof rec[k] !== 'string' || rec[k] === '');
  if (missing.length > 0) throw new StackNotRunningError(`${source} lacks ${missing.join(', ')}`);
  const out = {} as Record<StackEnvKey, string>;
  for (const k of STACK_ENV_KEYS) out[k] = rec[k] as string;
  return Object.freeze(out);
}

/** The endpoints of the running stack in `dir` (default: IBS_STACK_DIR or /tmp/ibs-stack). */
export function stackEnv(dir: string = stackDir()): StackEnv {
  const file = path.join(dir, 'env.json');
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    throw new StackNotRunningError(`${file} does not exist`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new StackNotRunningError(`${file} is not valid JSON`);
  }
  return parseStackEnv(raw, file);
}
