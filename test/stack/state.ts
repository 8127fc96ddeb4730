// Persistent choices of a stack directory: ports and credentials. Kept across `down`/`up` so that
// endpoints stay stable (a port is only changed when someone else took it meanwhile).
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { Layout } from './layout.js';
import { freePort, portFree } from './proc.js';

export const PORT_NAMES = [
  'builder',
  'builderTls',
  'builderB',
  'builderBTls',
  'registryAnon',
  'registryNodelete',
  'registryBasic',
  'registryToken',
  'tokenIssuer',
  'gitHttps',
  'gitHttp',
  'gitDaemon',
  'gitSsh',
  'redis',
  'redisCluster0',
  'redisCluster1',
  'redisCluster2',
] as const;
export type PortName = (typeof PORT_NAMES)[number];

export interface Credentials {
  registryBasicUser: string;
  registryBasicPassword: string;
  registryTokenUser: string;
  registryTokenPassword: string;
  gitHttpsUser: string;
  gitHttpsPassword: string;
  redisPassword: string;
}

export interface State {
  ports: Record<PortName, number>;
  credentials: Credentials;
}

function secret(): string {
  return crypto.randomBytes(12).toString('hex');
}

function read(l: Layout): Partial<State> {
  try {
    return JSON.parse(fs.readFileSync(l.stateFile, 'utf8')) as Partial<State>;
  } catch {
    return {};
  }
}

export function loadState(l: Layout): State | undefined {
  const s = read(l);
  return s.ports && s.credentials ? (s as State) : undefined;
}

export function saveState(l: Layout, s: State): void {
  fs.mkdirSync(l.root, { recursive: true });
  fs.writeFileSync(l.stateFile, `${JSON.stringify(s, null, 2)}\n`, { mode: 0o600 });
}

/** Loads or creates the state. Ports whose owners are not running are re-checked by `claimPort`. */
export async function ensureState(l: Layout): Promise<State> {
  const prev = read(l);
  const ports = {} as Record<PortName, number>;
  const taken = new Set<number>();
  for (const name of PORT_NAMES) {
    const p = prev.ports?.[name];
    if (typeof p === 'number' && !taken.has(p)) ports[name] = p;
    else {
      let np = await freePort();
      while (taken.has(np)) np = await freePort();
      ports[name] = np;
    }
    taken.add(ports[name]);
  }
  // Credentials added later (redisPassword) are generated for an older state file too.
  const credentials: Credentials = {
    registryBasicUser: 'basic-user',
    registryBasicPassword: secret(),
    registryTokenUser: 'token-user',
    registryTokenPassword: secret(),
    gitHttpsUser: 'git-user',
    gitHttpsPassword: secret(),
    redisPassword: secret(),
    ...prev.credentials,
  };
  const s: State = { ports, credentials };
  saveState(l, s);
  return s;
}

/**
 * Before starting a component whose port is recorded: if another process holds the port, pick a
 * new free one and persist it. Returns the port to use.
 */
export async function claimPort(l: Layout, s: State, name: PortName): Promise<number> {
  if (await portFree(s.ports[name])) return s.ports[name];
  const used = new Set(Object.values(s.ports));
  let np = await freePort();
  while (used.has(np)) np = await freePort();
  s.ports[name] = np;
  saveState(l, s);
  return np;
}
