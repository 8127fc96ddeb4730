// The BuildKit endpoints of builders a and b: per builder, one bridge process (servers/grpc-bridge.ts)
// that upgrades each connection to its dockerd's /grpc, on a plain port and on a mutual-TLS port, plus
// a buildx remote builder on the plain port in the stack's DOCKER_CONFIG (bootstrapped: the health
// check). Tests stop and start one builder's bridge with builders.ts.
import fs from 'node:fs';
import type { Layout } from '../layout.js';
import { type DetachedSpec, baseEnv, portFree, run, tcpOpen } from '../proc.js';
import { type State, claimPort } from '../state.js';
import { ensureDaemon } from './daemon.js';
import { BUILDER_IDS, type BuilderId, type Engine, engine } from './engines.js';
import { keyPaths } from './keys.js';
import { nodeServer } from './node-script.js';
import type { Component, Ctx, Outcome } from './types.js';

/** Builder a's buildx builder (STACK_BUILDER_NAME); builder b's is STACK_BUILDER_B_NAME. */
export const STACK_BUILDER_NAME = 'ibs-stack';

export function builderEndpoint(port: number): string {
  return `tcp://127.0.0.1:${port}`;
}

function dockerEnv(l: Layout): NodeJS.ProcessEnv {
  return baseEnv({ DOCKER_CONFIG: l.dockerConfig });
}

/** Makes sure STACK_DOCKER_CONFIG has a remote builder pointing at the endpoint, and it is running. */
async function ensureBuildxBuilder(l: Layout, name: string, endpoint: string): Promise<void> {
  fs.mkdirSync(l.dockerConfig, { recursive: true });
  const env = dockerEnv(l);
  const current = await run('docker', ['buildx', 'inspect', name], { env }).catch(() => undefined);
  if (!current || !current.stdout.includes(`Endpoint:`) || !current.stdout.includes(endpoint)) {
    if (current) await run('docker', ['buildx', 'rm', name], { env }).catch(() => undefined);
    await run('docker', ['buildx', 'create', '--name', name, '--driver', 'remote', endpoint], { env });
  }
  const out = await run('docker', ['buildx', 'inspect', '--bootstrap', name], { env, timeoutMs: 30_000 });
  if (!/Status:\s+running/.test(out.stdout)) throw new Error(`builder not running:\n${out.stdout}`);
}

/** Both of the bridge's ports accept connections. */
export async function bridgeOpen(s: State, e: Engine): Promise<boolean> {
  return (await tcpOpen(s.ports[e.port])) && (await tcpOpen(s.ports[e.tlsPort]));
}

/**
 * The bridge's command line. `claim`: take new ports when the recorded ones are taken (as `up`
 * does); without it (restarting a bridge under running tests, whose env names the ports) a taken
 * port is an error.
 */
export async function bridgeSpec(l: Layout, s: State, e: Engine, claim: boolean): Promise<DetachedSpec> {
  const ports: number[] = [];
  for (const name of [e.port, e.tlsPort]) {
    if (claim) ports.push(await claimPort(l, s, name));
    else if (await portFree(s.ports[name])) ports.push(s.ports[name]);
    else throw new Error(`port ${s.ports[name]} of builder ${e.id} is taken by another process`);
  }
  const k = keyPaths(l);
  return nodeServer(e.bridgeName, 'grpc-bridge.ts', [
    String(ports[0]),
    e.socket,
    String(ports[1]),
    k.builderServerCert,
    k.builderServerKey,
    k.caCert,
  ]);
}

export function ensureBridge(l: Layout, s: State, id: BuilderId, claim: boolean): Promise<Outcome> {
  const e = engine(l, id);
  return ensureDaemon(l, {
    name: e.bridgeName,
    healthy: () => bridgeOpen(s, e),
    prepare: () => bridgeSpec(l, s, e, claim),
  });
}

function builderComponent(id: BuilderId): Component {
  const suffix = id === 'a' ? '' : `-${id}`;
  return {
    name: `builder${suffix}`,
    deps: [`dockerd${suffix}`, 'keys'],
    daemons: [`builder${suffix}`],
    ensure: async ({ l, s }: Ctx) => {
      const outcome = await ensureBridge(l, s, id, true);
      const e = engine(l, id);
      await ensureBuildxBuilder(l, e.buildxName, builderEndpoint(s.ports[e.port]));
      return outcome;
    },
  };
}

export const builders: readonly Component[] = BUILDER_IDS.map(builderComponent);
