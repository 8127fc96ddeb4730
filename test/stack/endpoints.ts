// Computes the stack's env (see env.ts for the key list) from its layout and state, and writes it
// as $STACK_DIR/env (KEY=value lines) and $STACK_DIR/env.json.
import fs from 'node:fs';
import path from 'node:path';
import { shellQuote } from '../../src/rules/shell-quote.js';
import { baseImage } from './components/base-image.js';
import { STACK_BUILDER_NAME, builderEndpoint } from './components/builder.js';
import { engine } from './components/engines.js';
import { keyPaths } from './components/keys.js';
import { sshHostKeyFingerprint, sshHostKeyLine, sshPaths } from './components/git-servers.js';
import { TOKEN_SERVICE, registryHost, tokenRealm } from './components/registries.js';
import { REDIS_CLUSTER_PORTS, clusterPasswordFile } from './components/redis-cluster.js';
import { STACK_ENV_KEYS, type StackEnv, envJsonRecord, parseStackEnv } from './env.js';
import { COSIGN_BIN, type Layout } from './layout.js';
import { redisUrl } from './redis-server.js';
import { sbomGeneratorImage } from './components/sbom-generator.js';
import type { State } from './state.js';

export async function computeEnv(l: Layout, s: State): Promise<StackEnv> {
  const c = s.credentials;
  const p = s.ports;
  const k = keyPaths(l);
  const raw: Record<string, string> = {
    STACK_DIR: l.root,
    STACK_BUILDER_ENDPOINT: builderEndpoint(p.builder),
    STACK_DOCKER_HOST: `unix://${l.dockerSocket}`,
    REGISTRY_ANON: registryHost(s, 'anon'),
    REGISTRY_NODELETE: registryHost(s, 'nodelete'),
    REGISTRY_BASIC: registryHost(s, 'basic'),
    REGISTRY_BASIC_USER: c.registryBasicUser,
    REGISTRY_BASIC_PASSWORD: c.registryBasicPassword,
    REGISTRY_TOKEN: registryHost(s, 'token'),
    REGISTRY_TOKEN_USER: c.registryTokenUser,
    REGISTRY_TOKEN_PASSWORD: c.registryTokenPassword,
    TOKEN_ISSUER_URL: tokenRealm(s),
    TOKEN_ISSUER_COUNT_URL: `http://localhost:${p.tokenIssuer}/count`,
    BASE_IMAGE_ANON: baseImage(s, 'anon'),
    BASE_IMAGE_NODELETE: baseImage(s, 'nodelete'),
    BASE_IMAGE_BASIC: baseImage(s, 'basic'),
    BASE_IMAGE_TOKEN: baseImage(s, 'token'),
    GIT_HTTPS_URL: `https://127.0.0.1:${p.gitHttps}`,
    GIT_HTTPS_USER: c.gitHttpsUser,
    GIT_HTTPS_PASSWORD: c.gitHttpsPassword,
    GIT_CA_FILE: keyPaths(l).caCert,
    GIT_SSH_URL: `ssh://root@127.0.0.1:${p.gitSsh}${l.repos}`,
    GIT_SSH_HOST: '127.0.0.1',
    GIT_SSH_PORT: String(p.gitSsh),
    GIT_SSH_KEY_FILE: keyPaths(l).sshClientKey,
    GIT_SSH_HOST_KEY: sshHostKeyLine(l, s),
    GIT_DAEMON_URL: `git://127.0.0.1:${p.gitDaemon}`,
    GIT_HTTP_URL: `http://127.0.0.1:${p.gitHttp}`,
    GIT_HTTPS_NO_FILTER_URL: `https://127.0.0.1:${p.gitHttps}/no-filter`,
    REGISTRY_TOKEN_SERVICE: TOKEN_SERVICE,
    GIT_SSH_KNOWN_HOSTS_FILE: sshPaths(l).knownHosts,
    GIT_SSH_HOST_KEY_FINGERPRINT: await sshHostKeyFingerprint(l),
    GIT_REPOS_DIR: l.repos,
    STACK_DOCKER_CONFIG: l.dockerConfig,
    STACK_BUILDER_NAME,
    STACK_REDIS_URL: redisUrl(p.redis, c.redisPassword),
    STACK_REDIS_CLUSTER_NODES: REDIS_CLUSTER_PORTS.map((name) => `127.0.0.1:${p[name]}`).join(','),
    STACK_REDIS_CLUSTER_PASSWORD_FILE: clusterPasswordFile(l),
    BUILDER_A_ENDPOINT: builderEndpoint(p.builder),
    BUILDER_A_TLS_ENDPOINT: builderEndpoint(p.builderTls),
    BUILDER_B_ENDPOINT: builderEndpoint(p.builderB),
    BUILDER_B_TLS_ENDPOINT: builderEndpoint(p.builderBTls),
    BUILDER_TLS_CA_FILE: k.caCert,
    STACK_BUILDER_TLS_SERVER_NAME: 'localhost',
    BUILDER_TLS_CLIENT_CERT_FILE: k.builderClientCert,
    BUILDER_TLS_CLIENT_KEY_FILE: k.builderClientKey,
    BUILDER_TLS_OTHER_CA_FILE: k.otherCaCert,
    BUILDER_TLS_OTHER_CA_CLIENT_CERT_FILE: k.otherClientCert,
    BUILDER_TLS_OTHER_CA_CLIENT_KEY_FILE: k.otherClientKey,
    STACK_DOCKER_HOST_B: `unix://${l.dockerSocketB}`,
    STACK_BUILDER_B_NAME: engine(l, 'b').buildxName,
    COSIGN_BIN,
    SBOM_GENERATOR_IMAGE: sbomGeneratorImage(s),
  };
  return parseStackEnv(raw, 'computed env');
}

/** KEY=value lines; values never contain newlines (checked), so the file can be sourced. */
export function formatEnv(env: StackEnv): string {
  return STACK_ENV_KEYS.map((k) => {
    const v = env[k];
    if (/[\n\r]/.test(v)) throw new Error(`env value of ${k} contains a newline`);
    return `${k}=${/^[\w@%+=:,./[\]-]*$/.test(v) ? v : shellQuote(v)}\n`;
  }).join('');
}

export function writeEnv(l: Layout, env: StackEnv): void {
  fs.writeFileSync(l.envFile, formatEnv(env), { mode: 0o600 });
  const tmp = path.join(l.root, 'env.json.tmp');
  fs.writeFileSync(tmp, `${JSON.stringify(envJsonRecord(env), null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(tmp, l.envJsonFile);
}

export function removeEnv(l: Layout): void {
  fs.rmSync(l.envFile, { force: true });
  fs.rmSync(l.envJsonFile, { force: true });
}
