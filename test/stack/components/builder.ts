// The BuildKit endpoint: a TCP listener that upgrades each connection to dockerd's /grpc (see
// servers/grpc-bridge.ts), plus a buildx remote builder using it in the stack's DOCKER_CONFIG.
import fs from 'node:fs';
import type { Layout } from '../layout.js';
import { baseEnv, run, tcpOpen } from '../proc.js';
import { claimPort } from '../state.js';
import { ensureDaemon } from './daemon.js';
import { nodeServer } from './node-script.js';
import type { Component, Ctx } from './types.js';

export const STACK_BUILDER_NAME = 'ibs-stack';

export function builderEndpoint(port: number): string {
  return `tcp://127.0.0.1:${port}`;
}

function dockerEnv(l: Layout): NodeJS.ProcessEnv {
  return baseEnv({ DOCKER_CONFIG: l.dockerConfig });
}

/** Makes sure STACK_DOCKER_CONFIG has a remote builder pointing at the endpoint, and it is running. */
async function ensureBuildxBuilder(l: Layout, endpoint: string): Promise<void> {
  fs.mkdirSync(l.dockerConfig, { recursive: true });
  const env = dockerEnv(l);
  const current = await run('docker', ['buildx', 'inspect', STACK_BUILDER_NAME], { env }).catch(
    () => undefined,
  );
  if (!current || !current.stdout.includes(`Endpoint:`) || !current.stdout.includes(endpoint)) {
    if (current) await run('docker', ['buildx', 'rm', STACK_BUILDER_NAME], { env }).catch(() => undefined);
    await run('docker', ['buildx', 'create', '--name', STACK_BUILDER_NAME, '--driver', 'remote', endpoint], {
      env,
    });
  }
  const out = await run('docker', ['buildx', 'inspect', '--bootstrap', STACK_BUILDER_NAME], {
    env,
    timeoutMs: 30_000,
  });
  if (!/Status:\s+running/.test(out.stdout)) throw new Error(`builder not running:\n${out.stdout}`);
}

export const builder: Component = {
  name: 'builder',
  deps: ['dockerd'],
  daemons: ['builder'],
  ensure: async ({ l, s }: Ctx) => {
    const outcome = await ensureDaemon(l, {
      name: 'builder',
      healthy: () => tcpOpen(s.ports.builder),
      prepare: async () => {
        const port = await claimPort(l, s, 'builder');
        return nodeServer('builder', 'grpc-bridge.ts', [String(port), l.dockerSocket]);
      },
    });
    await ensureBuildxBuilder(l, builderEndpoint(s.ports.builder));
    return outcome;
  },
};
