// The four distribution registries (bookworm's docker-registry), each its own process, config and
// storage, plus the token issuer used by the Bearer one. All plain HTTP on 127.0.0.1; they are
// addressed as `localhost:PORT` because the Dev Containers CLI only speaks plain HTTP to `localhost`.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import type { Layout } from '../layout.js';
import { baseEnv, run } from '../proc.js';
import { claimPort, type PortName, type State } from '../state.js';
import { ensureDaemon, httpStatus } from './daemon.js';
import { keyPaths } from './keys.js';
import { nodeServer } from './node-script.js';
import type { Component, Ctx } from './types.js';

export const TOKEN_SERVICE = 'ibs-stack-registry';
export const TOKEN_ISSUER = 'ibs-stack-token-issuer';
export const TOKEN_EXPIRES_IN = 300;

export type RegistryKind = 'anon' | 'nodelete' | 'basic' | 'token';

const PORT: Record<RegistryKind, PortName> = {
  anon: 'registryAnon',
  nodelete: 'registryNodelete',
  basic: 'registryBasic',
  token: 'registryToken',
};

export function registryHost(s: State, kind: RegistryKind): string {
  return `localhost:${s.ports[PORT[kind]]}`;
}

export function tokenRealm(s: State): string {
  return `http://localhost:${s.ports.tokenIssuer}/token`;
}

async function registryConfig(l: Layout, s: State, kind: RegistryKind, port: number): Promise<string> {
  const dir = path.join(l.registries, kind);
  fs.mkdirSync(path.join(dir, 'storage'), { recursive: true });
  const secretFile = path.join(dir, 'http-secret');
  if (!fs.existsSync(secretFile))
    fs.writeFileSync(secretFile, crypto.randomBytes(16).toString('hex'), { mode: 0o600 });
  const config: Record<string, unknown> = {
    version: 0.1,
    log: { level: 'info', accesslog: { disabled: true }, fields: { service: `registry-${kind}` } },
    storage: {
      filesystem: { rootdirectory: path.join(dir, 'storage') },
      delete: { enabled: kind !== 'nodelete' },
      maintenance: { uploadpurging: { enabled: false } },
    },
    http: { addr: `127.0.0.1:${port}`, secret: fs.readFileSync(secretFile, 'utf8') },
  };
  if (kind === 'basic') {
    const { registryBasicUser: user, registryBasicPassword: password } = s.credentials;
    // htpasswd -i reads the password from stdin (never in argv).
    const { stdout } = await run('htpasswd', ['-niB', user], { input: `${password}\n` });
    fs.writeFileSync(path.join(dir, 'htpasswd'), `${stdout.trim()}\n`, { mode: 0o600 });
    config.auth = { htpasswd: { realm: 'ibs-stack-basic', path: path.join(dir, 'htpasswd') } };
  }
  if (kind === 'token') {
    config.auth = {
      token: {
        realm: tokenRealm(s),
        service: TOKEN_SERVICE,
        issuer: TOKEN_ISSUER,
        rootcertbundle: keyPaths(l).tokenCert,
      },
    };
  }
  const file = path.join(dir, 'config.yml');
  fs.writeFileSync(file, stringify(config), { mode: 0o600 });
  return file;
}

function registry(kind: RegistryKind): Component {
  const name = `registry-${kind}`;
  return {
    name,
    deps: kind === 'token' ? ['keys', 'token-issuer'] : [],
    daemons: [name],
    ensure: ({ l, s }: Ctx) =>
      ensureDaemon(l, {
        name,
        healthy: async () => {
          const res = await fetch(`http://127.0.0.1:${s.ports[PORT[kind]]}/v2/`, {
            signal: AbortSignal.timeout(2000),
          });
          await res.arrayBuffer();
          if (kind === 'anon' || kind === 'nodelete') return res.status === 200;
          // A token registry must point at the current realm (the issuer's port may have moved).
          const challenge = res.headers.get('www-authenticate') ?? '';
          return res.status === 401 && (kind === 'basic' || challenge.includes(`realm="${tokenRealm(s)}"`));
        },
        prepare: async () => {
          const port = await claimPort(l, s, PORT[kind]);
          const file = await registryConfig(l, s, kind, port);
          return { name, cmd: 'docker-registry', args: ['serve', file], env: baseEnv() };
        },
      }),
  };
}

export const tokenIssuer: Component = {
  name: 'token-issuer',
  deps: ['keys'],
  daemons: ['token-issuer'],
  ensure: ({ l, s }: Ctx) =>
    ensureDaemon(l, {
      name: 'token-issuer',
      healthy: async () => (await httpStatus(`http://127.0.0.1:${s.ports.tokenIssuer}/count`)) === 200,
      prepare: async () => {
        const port = await claimPort(l, s, 'tokenIssuer');
        const k = keyPaths(l);
        const file = path.join(l.token, 'issuer.json');
        const config = {
          port,
          issuer: TOKEN_ISSUER,
          service: TOKEN_SERVICE,
          keyFile: k.tokenKey,
          certFile: k.tokenCert,
          expiresIn: TOKEN_EXPIRES_IN,
          users: { [s.credentials.registryTokenUser]: s.credentials.registryTokenPassword },
        };
        fs.writeFileSync(file, JSON.stringify(config, null, 2), { mode: 0o600 });
        return nodeServer('token-issuer', 'token-issuer.ts', [file]);
      },
    }),
};

export const registries: Component[] = (['anon', 'nodelete', 'basic', 'token'] as const).map(registry);
