// Losing a builder on purpose (failover, a builder lost mid-build) while the rest of the stack runs.
// - privateBuilderBridge('b'): a bridge of the test's own to builder b's BuildKit (same cache), on new
//   plain + TLS ports, that it stops and starts at will without disturbing other test files that use
//   the stack's builder b at the same time. Prefer it in tests.
// - stopBuilderBridge('b') / startBuilderBridge('b'): the stack's own bridge of b (the env's ports);
//   every user of BUILDER_B_* loses it meanwhile (also `npm run stack -- stop-bridge b`).
// Each returns once the ports refuse / accept connections, and is idempotent.
import crypto from 'node:crypto';
import { bridgeOpen, builderEndpoint, ensureBridge } from './components/builder.js';
import { type BuilderId, engine } from './components/engines.js';
import { StackNotRunningError } from './env.js';
import { type Layout, layout, stackDir } from './layout.js';
import { acquireLock } from './lock.js';
import { keyPaths } from './components/keys.js';
import { nodeServer } from './components/node-script.js';
import { freePort, startDetached, stopComponent, tcpOpen, waitFor } from './proc.js';
import { type State, loadState } from './state.js';

export type { BuilderId } from './components/engines.js';

async function withStack<T>(dir: string, fn: (l: Layout, s: State) => Promise<T>): Promise<T> {
  const l = layout(dir);
  const s = loadState(l);
  if (!s) throw new StackNotRunningError(`${l.stateFile} does not exist`);
  const release = await acquireLock(l);
  try {
    return await fn(l, s);
  } finally {
    release();
  }
}

/** Stops builder `id`'s bridge; resolves when neither of its ports accepts a connection. */
export function stopBuilderBridge(id: BuilderId, dir: string = stackDir()): Promise<void> {
  return withStack(dir, async (l, s) => {
    const e = engine(l, id);
    await stopComponent(l, e.bridgeName);
    const closed = async () => !(await tcpOpen(s.ports[e.port])) && !(await tcpOpen(s.ports[e.tlsPort]));
    await waitFor(`builder ${id}'s ports closed`, closed, { timeoutMs: 10_000 });
  });
}

/** Starts builder `id`'s bridge on its recorded ports (no-op when it runs); resolves when both are open. */
export function startBuilderBridge(id: BuilderId, dir: string = stackDir()): Promise<void> {
  return withStack(dir, async (l, s) => {
    await ensureBridge(l, s, id, false);
    if (!(await bridgeOpen(s, engine(l, id)))) throw new Error(`builder ${id}'s bridge did not open`);
  });
}

export interface PrivateBridge {
  readonly id: BuilderId;
  /** tcp://127.0.0.1:P, plain. */
  readonly endpoint: string;
  /** tcp://127.0.0.1:P, mutual TLS (the stack's BUILDER_TLS_* files). */
  readonly tlsEndpoint: string;
  /** Kills the bridge (open connections drop, as when a builder dies); resolves when both ports refuse. */
  stop(): Promise<void>;
  /** Starts it again on the same ports; resolves when both accept connections. */
  start(): Promise<void>;
}

const bothPorts = async (ports: readonly number[], open: boolean): Promise<boolean> => {
  for (const p of ports) if ((await tcpOpen(p)) !== open) return false;
  return true;
};

/**
 * A bridge of the caller's own to builder `id`'s BuildKit, started before it resolves. Stop it in a
 * teardown (`down` also sweeps it: it carries the stack's marker).
 */
export async function privateBuilderBridge(id: BuilderId, dir: string = stackDir()): Promise<PrivateBridge> {
  const l = layout(dir);
  if (!loadState(l)) throw new StackNotRunningError(`${l.stateFile} does not exist`);
  const e = engine(l, id);
  const k = keyPaths(l);
  const name = `private-${e.bridgeName}-${crypto.randomBytes(4).toString('hex')}`;
  const ports = [await freePort(), await freePort()] as const;
  const args = [
    String(ports[0]),
    e.socket,
    String(ports[1]),
    k.builderServerCert,
    k.builderServerKey,
    k.caCert,
  ];
  const bridge: PrivateBridge = {
    id,
    endpoint: builderEndpoint(ports[0]),
    tlsEndpoint: builderEndpoint(ports[1]),
    stop: async () => {
      await stopComponent(l, name, 2000);
      await waitFor(`${name} closed`, () => bothPorts(ports, false), { timeoutMs: 10_000 });
    },
    start: async () => {
      if (await bothPorts(ports, true)) return;
      const pid = startDetached(l, nodeServer(name, 'grpc-bridge.ts', args));
      await waitFor(`${name} open`, () => bothPorts(ports, true), { pid, timeoutMs: 20_000 });
    },
  };
  await bridge.start();
  return bridge;
}
